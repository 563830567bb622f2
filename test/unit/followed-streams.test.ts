import { describe, expect, it } from 'vitest'
import { FollowedStreams } from '../../functions/http/followed-streams.ts'

/** A stream that answers `chunks`, then ends (or fails with `failure`). */
function streamOf(chunks: string[], failure?: Error): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let next = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++]
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk))
      else if (failure) controller.error(failure)
      else controller.close()
    },
  })
}

describe('FollowedStreams', () => {
  it('holds a place per tenant until the stream ends, fails or is cancelled', async () => {
    const followed = new FollowedStreams(2)
    const ended = followed.hold('a', streamOf(['x', 'y']))
    const failed = followed.hold('a', streamOf(['x'], new Error('store down')))
    expect(() => followed.hold('a', streamOf([]))).toThrow(
      expect.objectContaining({ code: 'rate_limited', retryAfter: 1 }),
    )
    // Another tenant has places of its own.
    const other = followed.hold('b', streamOf([]))
    // Read whole: the same bytes, and the place is back.
    expect(await new Response(ended).text()).toBe('xy')
    const third = followed.hold('a', streamOf(['z']))
    expect(() => followed.hold('a', streamOf([]))).toThrow(
      expect.objectContaining({ code: 'rate_limited' }),
    )
    await expect(new Response(failed).text()).rejects.toThrow('store down')
    await third.cancel()
    followed.hold('a', streamOf([]))
    followed.hold('a', streamOf([]))
    expect(() => followed.hold('a', streamOf([]))).toThrow(
      expect.objectContaining({ code: 'rate_limited' }),
    )
    await other.cancel()
  })
})

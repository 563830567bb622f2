import { describe, expect, it } from 'vitest'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { UpstashTenantLimiter } from '../../adapters/upstash/upstash-tenant-limiter.ts'
import { FollowedStreams } from '../../functions/http/followed-streams.ts'
import { testClock } from '../support/test-clock.ts'
import { until } from '../support/until.ts'

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

/** A stream that stays open: nothing comes, and it never ends. */
const open = () => new ReadableStream<Uint8Array>({ pull() {} })

const refused = (retryAfter?: number) =>
  expect.objectContaining({
    code: 'rate_limited',
    ...(retryAfter === undefined ? {} : { retryAfter }),
  })

describe('FollowedStreams', () => {
  it('holds a place per tenant until the stream ends, fails or is cancelled', async () => {
    const followed = new FollowedStreams({ max: 2 })
    const ended = await followed.hold('a', streamOf(['x', 'y']))
    const failed = await followed.hold('a', streamOf(['x'], new Error('store down')))
    await expect(followed.hold('a', open())).rejects.toEqual(refused(1))
    // Another tenant has places of its own.
    const other = await followed.hold('b', open())
    // Read whole: the same bytes, and the place is back.
    expect(await new Response(ended).text()).toBe('xy')
    const third = await followed.hold('a', streamOf(['z']))
    await expect(followed.hold('a', open())).rejects.toEqual(refused())
    await expect(new Response(failed).text()).rejects.toThrow('store down')
    await third.cancel()
    await followed.hold('a', open())
    await followed.hold('a', open())
    await expect(followed.hold('a', open())).rejects.toEqual(refused())
    await other.cancel()
  })

  it("counts a tenant's streams on every instance sharing the limiter", async () => {
    const limiter = new MemoryTenantLimiter()
    const [one, two] = [1, 2].map(() => new FollowedStreams({ max: 3, limiter, streamMs: 60_000 }))
    if (!one || !two) throw new Error('two instances')
    const first = await one.hold('a', streamOf(['x']))
    await two.hold('a', open())
    await one.hold('a', open())
    // Each instance holds fewer than 3, together they hold 3: the next is refused on either.
    await expect(two.hold('a', open())).rejects.toEqual(refused())
    await expect(one.hold('a', open())).rejects.toEqual(refused())
    await two.hold('b', open())
    expect(await limiter.activeSlots('a', 'follows')).toBe(3)
    // Turn slots are counted apart.
    expect(await limiter.activeSlots('a')).toBe(0)
    // A stream that ends gives its slot back, to any instance.
    expect(await new Response(first).text()).toBe('x')
    await until('the ended stream to give its slot back', async () =>
      (await limiter.activeSlots('a', 'follows')) === 2 ? true : undefined,
    )
    await two.hold('a', open())
  })

  it("lets a crashed instance's slots lapse once its streams could no longer be open", async () => {
    const clock = testClock()
    const limiter = new MemoryTenantLimiter({ clock })
    const crashed = new FollowedStreams({ max: 2, limiter, streamMs: 60_000 })
    await crashed.hold('a', open())
    await crashed.hold('a', open())
    // Its process is gone: nothing ends those streams or releases their slots.
    const alive = new FollowedStreams({ max: 2, limiter, streamMs: 60_000 })
    await expect(alive.hold('a', open())).rejects.toEqual(refused())
    await clock.advance(60_000)
    await expect(alive.hold('a', open())).rejects.toEqual(refused())
    // The follow limit and the slot's grace (10 s) passed: the slots lapsed.
    await clock.advance(10_000)
    await alive.hold('a', open())
    await alive.hold('a', open())
    await expect(alive.hold('a', open())).rejects.toEqual(refused())
  })

  it('lets a stream through, bounded in the process, when the counters cannot be reached', async () => {
    // Nothing listens there: every call is coordinator_unavailable.
    const limiter = new UpstashTenantLimiter({
      url: 'http://127.0.0.1:9',
      token: 't',
      deadline: { attemptMs: 200, budgetMs: 500 },
    })
    await expect(limiter.acquireSlot('a', 'probe', 1, 1000, 'follows')).rejects.toMatchObject({
      code: 'coordinator_unavailable',
    })
    const logged: Record<string, unknown>[] = []
    const followed = new FollowedStreams({ max: 1, limiter, log: (entry) => logged.push(entry) })
    const stream = await followed.hold('a', open())
    expect(logged).toEqual([expect.objectContaining({ level: 'warn', tenant: 'a' })])
    await expect(followed.hold('a', open())).rejects.toEqual(refused(1))
    await stream.cancel()
  })
})

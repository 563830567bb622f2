import { afterEach, describe, expect, it, vi } from 'vitest'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelStreamEvent } from '../../src/ports/model-client.ts'
import { stepOver } from '../support/model-step-run.ts'

/**
 * The work the engine does for a model's stream grows with the stream, never with its square: a
 * model steered into thousands of whitespace-only reasoning deltas (before any text, or between
 * answer text) once had the whole reasoning so far trimmed at each delta. Measured by the
 * characters `String.prototype.trim` reads, not by time.
 */
const completed: ModelStreamEvent = {
  type: 'completed',
  response: { text: 'done', toolCalls: [], usage: { ...ZERO_USAGE }, stopReason: 'stop' },
}

/** Characters trimmed while `run` runs (every string's trim, this process). */
async function trimmedChars(run: () => Promise<unknown>): Promise<number> {
  const trim = String.prototype.trim
  let chars = 0
  vi.spyOn(String.prototype, 'trim').mockImplementation(function (this: string) {
    chars += this.length
    return trim.call(this)
  })
  await run()
  return chars
}

const step = stepOver

afterEach(() => {
  vi.restoreAllMocks()
})

describe('model stream work', () => {
  const DELTAS = 5_000
  const blank = ' '.repeat(8)

  it('blank reasoning deltas before the reasoning starts are each looked at once', async () => {
    const stream: ModelStreamEvent[] = [
      ...Array.from({ length: DELTAS }, () => ({ type: 'reasoning_delta' as const, text: blank })),
      { type: 'reasoning_delta', text: 'thinking' },
      { type: 'text_delta', text: 'answer' },
      completed,
    ]
    let outcome: Awaited<ReturnType<typeof step>> | undefined
    const chars = await trimmedChars(async () => {
      outcome = await step(stream)
    })
    const streamed = DELTAS * blank.length + 'thinking'.length
    expect(chars).toBeLessThan(4 * streamed)
    const reasoning = outcome?.events.filter(
      (event) => event.type === 'item.completed' && event.item.type === 'reasoning',
    )
    expect(reasoning).toHaveLength(1)
    const [done] = reasoning ?? []
    expect(done?.type === 'item.completed' && done.item).toMatchObject({
      text: `${blank.repeat(DELTAS)}thinking`,
    })
  })

  it('blank reasoning between text deltas is not trimmed again at each text delta', async () => {
    const stream: ModelStreamEvent[] = []
    for (let i = 0; i < DELTAS; i++) {
      stream.push({ type: 'reasoning_delta', text: blank }, { type: 'text_delta', text: 'a' })
    }
    stream.push(completed)
    let outcome: Awaited<ReturnType<typeof step>> | undefined
    const chars = await trimmedChars(async () => {
      outcome = await step(stream)
    })
    expect(chars).toBeLessThan(4 * DELTAS * (blank.length + 1))
    // Whitespace-only reasoning is no item, as before.
    expect(outcome?.events.some((e) => 'item' in e && e.item.type === 'reasoning')).toBe(false)
    expect(outcome?.result.response.text).toBe('done')
  })
})

import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import {
  protocolViolations,
  trimIncompleteTail,
} from '../../src/core/compaction/protocol-groups.ts'
import { seededRandom } from '../support/compaction-histories.ts'

/**
 * trimIncompleteTail makes a transcript's newest group sendable. A client's transcript (an Open
 * Responses input, a compaction item it sends back) may hold thousands of stray tool results;
 * dropping them one at a time and looking again cost the square of their number (16,000 took
 * 12 s of the server's thread). It now answers in one pass what that answered.
 */

/** The rule as first written: drop the first break (a stray result alone, else cut), look again. */
function oneBreakAtATime(messages: readonly HistoryMessage[]) {
  let kept = [...messages]
  for (;;) {
    const violation = protocolViolations(kept)[0]
    if (!violation) return { messages: kept, dropped: messages.length - kept.length }
    if (violation.kind === 'orphan_tool_result') kept.splice(violation.index, 1)
    else kept = kept.slice(0, violation.index)
  }
}

function randomTranscript(random: () => number): HistoryMessage[] {
  const ids = ['a', 'b', 'c', 'd']
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T
  const messages: HistoryMessage[] = [{ role: 'user', content: 'go' }]
  const length = Math.floor(random() * 12)
  for (let i = 0; i < length; i++) {
    const roll = random()
    if (roll < 0.3) {
      const calls = Array.from({ length: Math.floor(random() * 3) }, () => ({
        id: pick(ids),
        name: 't',
        arguments: '{}',
      }))
      messages.push({ role: 'assistant', content: '', tool_calls: calls })
    } else if (roll < 0.8) {
      messages.push({ role: 'tool', tool_call_id: pick(ids), content: 'r' })
    } else {
      messages.push({ role: 'assistant', content: 'text' })
    }
  }
  return messages
}

/** The transcript with each message counting the reads of its `role`. */
function counted(messages: HistoryMessage[]): { messages: HistoryMessage[]; reads: () => number } {
  let reads = 0
  const wrapped = messages.map(
    (message) =>
      new Proxy(message, {
        get(target, key, receiver) {
          if (key === 'role') reads += 1
          return Reflect.get(target, key, receiver)
        },
      }),
  )
  return { messages: wrapped, reads: () => reads }
}

describe('trimIncompleteTail', () => {
  it('answers what dropping one break at a time answers', () => {
    const random = seededRandom(11)
    for (let i = 0; i < 3000; i++) {
      const messages = randomTranscript(random)
      expect(trimIncompleteTail(messages), JSON.stringify(messages)).toEqual(
        oneBreakAtATime(messages),
      )
    }
  })

  it('reads each message a bounded number of times, however many stray results there are', () => {
    const strays = 4_000
    const { messages, reads } = counted([
      { role: 'user', content: 'go' },
      ...Array.from({ length: strays }, (_, i) => ({
        role: 'tool' as const,
        tool_call_id: `stray_${i}`,
        content: 'r',
      })),
      { role: 'assistant', content: '', tool_calls: [{ id: 'open', name: 't', arguments: '{}' }] },
    ])
    const trimmed = trimIncompleteTail(messages)
    expect(trimmed.messages).toHaveLength(1)
    expect(trimmed.dropped).toBe(strays + 1)
    expect(reads()).toBeLessThan(8 * messages.length)
  })
})

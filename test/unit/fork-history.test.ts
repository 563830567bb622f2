import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import {
  buildSummarizedForkHistory,
  forkSummaryRequest,
  RETAINED_USER_TOKENS,
  retainedUserMessages,
  savedSummary,
} from '../../src/core/session/fork-history.ts'

const user = (content: string, intent_id?: string): HistoryMessage =>
  intent_id ? { role: 'user', content, intent_id } : { role: 'user', content }

const source: HistoryMessage[] = [
  { role: 'system', content: 'Previous conversation summary:\nearlier work' },
  user('u1'),
  { role: 'assistant', content: 'a1', tool_calls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
  { role: 'tool', tool_call_id: 'c1', content: 'r1' },
  user('u2'),
  { role: 'assistant', content: 'a2' },
  user('u3', 'intent-1'),
  user('   '),
  { role: 'assistant', content: 'a3' },
  user('u4'),
  user('u5'),
  { role: 'assistant', content: 'a5' },
]

describe('summarized fork history', () => {
  it('is the summary plus the newest four user messages, oldest first, without any tail', () => {
    const history = buildSummarizedForkHistory({ history: source, summary: 'the summary' })
    expect(history).toEqual([
      { role: 'system', content: 'Previous conversation summary:\nthe summary' },
      user('u2'),
      user('u3', 'intent-1'),
      user('u4'),
      user('u5'),
    ])
    expect(history.some((m) => m.role === 'assistant' || m.role === 'tool')).toBe(false)
  })

  it('puts the source envelope first, for the target only', () => {
    const envelope: HistoryMessage = {
      role: 'system',
      content: '[Session Memory Envelope]\nSummary:\nthe summary',
    }
    const before = structuredClone(source)
    const history = buildSummarizedForkHistory({
      history: source,
      summary: 'the summary',
      envelope,
      retainedUsers: 2,
    })
    expect(history.map((m) => m.content)).toEqual([
      envelope.content,
      'Previous conversation summary:\nthe summary',
      'u4',
      'u5',
    ])
    expect(source).toEqual(before)
  })

  it('keeps retained users within the token budget and bounds an oversized newest one', () => {
    const huge = 'x'.repeat(RETAINED_USER_TOKENS * 4 + 400)
    const kept = retainedUserMessages([user('older'), user(huge)])
    expect(kept).toHaveLength(1)
    expect(kept[0]?.content.length).toBeLessThan(huge.length)
    expect(kept[0]?.content.endsWith('[truncated]')).toBe(true)
    const big = 'y'.repeat(RETAINED_USER_TOKENS * 3)
    expect(retainedUserMessages([user(big), user(big)]).map((m) => m.content)).toEqual([big])
    expect(retainedUserMessages([user('a'), user('b')], 4, 100, () => 60)).toEqual([user('b')])
  })

  it('finds the saved summary of a compacted source (zero-cost fork)', () => {
    expect(savedSummary(source)).toBe('earlier work')
    expect(savedSummary([user('only')])).toBeUndefined()
  })

  it('asks for one summary when none was saved', () => {
    const messages = forkSummaryRequest(source)
    expect(messages[0]).toEqual({
      role: 'system',
      content: 'Previous conversation summary:\nearlier work',
    })
    expect(messages.slice(1, -1)).toEqual(source.slice(1))
    expect(messages.at(-1)?.role).toBe('user')
    expect(messages.at(-1)?.content).toMatch(/^Summarize the conversation above/)
    const envelopeOnly = forkSummaryRequest([
      { role: 'system', content: '[Session Memory Envelope]\nSummary:\nx' },
      user('hello'),
    ])
    expect(envelopeOnly.map((m) => m.content.slice(0, 5))).toEqual(['hello', 'Summa'])
  })
})

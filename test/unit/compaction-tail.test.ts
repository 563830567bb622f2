import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import {
  CONTINUITY_TAIL_TARGET_TOKENS,
  selectContinuity,
  tooShortToCompact,
} from '../../src/core/compaction/continuity-tail.ts'
import {
  assertNoOrphans,
  protocolGroups,
  protocolViolations,
} from '../../src/core/compaction/protocol-groups.ts'
import { TokenCounter } from '../../src/core/compaction/token-counter.ts'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import {
  call,
  messyHistory,
  result,
  say,
  scriptedHistory,
  seededRandom,
  turn,
  user,
} from '../support/compaction-histories.ts'

const counter = new TokenCounter(approximateTokenizer)
const countTokens = (message: HistoryMessage) => counter.countMessage(message)
const select = (history: readonly HistoryMessage[], archivePath?: string) =>
  selectContinuity(history, { countTokens, archivePath })

describe('the orphan checker', () => {
  it('accepts answered calls and rejects every kind of break', () => {
    expect(() =>
      assertNoOrphans([user('u'), call('a', 'b'), result('a'), result('b'), say('x')]),
    ).not.toThrow()
    expect(protocolViolations([user('u'), call('a', 'b'), result('a')])).toEqual([
      { kind: 'unanswered_tool_call', index: 1, tool_call_id: 'b' },
    ])
    expect(protocolViolations([user('u'), result('z')])).toEqual([
      { kind: 'orphan_tool_result', index: 1, tool_call_id: 'z' },
    ])
    // a result after an interleaved message is an orphan, and the call is unanswered
    expect(protocolViolations([call('a'), say('x'), result('a')]).map((v) => v.kind)).toEqual([
      'unanswered_tool_call',
      'orphan_tool_result',
    ])
    expect(protocolViolations([call('a'), result('a'), result('a')]).map((v) => v.kind)).toEqual([
      'orphan_tool_result',
    ])
    expect(protocolViolations([call('d', 'd'), result('d')]).map((v) => v.kind)).toEqual([
      'duplicate_tool_call_id',
    ])
    expect(() => assertNoOrphans([call('a')])).toThrow(/unanswered_tool_call "a" at message 0/)
  })

  it('splits groups at user messages and leaves system messages out', () => {
    const groups = protocolGroups([
      { role: 'system', content: 's' },
      say('pre'),
      user('1'),
      say('a'),
      user('2'),
    ])
    expect(groups.map((g) => [g.start, g.anchored, g.messages.length])).toEqual([
      [1, false, 1],
      [2, true, 2],
      [4, true, 1],
    ])
  })
})

describe('continuity tail', () => {
  it('keeps the newest complete groups within ≈ 20,000 tokens, contiguous, oldest first', () => {
    const history = scriptedHistory(7, 400)
    const selection = select(history)
    expect(selection.tailTokens).toBeLessThanOrEqual(CONTINUITY_TAIL_TARGET_TOKENS)
    expect(selection.tailTokens).toBeGreaterThan(CONTINUITY_TAIL_TARGET_TOKENS * 0.8)
    expect(selection.tail).toEqual(history.slice(selection.tailStart))
    expect(selection.tail[0]?.role).toBe('user')
    expect(selection.previewed).toBe(false)
    assertNoOrphans(selection.tail)
  })

  it('drops an unanswered trailing tool call and what follows it, keeping the user anchor', () => {
    const random = seededRandom(3)
    const earlier = turn(0, { rounds: 1, callsPerRound: 2, words: 20 }, random)
    const history = [
      ...earlier,
      user('fix it'),
      call('a'),
      result('a'),
      call('b', 'c'),
      result('b'),
    ]
    const selection = select(history)
    // the whole history fits: the tail takes at most half, so the summary replaces `earlier`
    expect(selection.tail).toEqual([user('fix it'), call('a'), result('a')])
    expect(selection.droppedFromNewest).toBe(2)
    assertNoOrphans(selection.tail)
  })

  it('keeps at most half of a history that fits whole, the newest part', () => {
    const history = [
      user('1'),
      say('a'),
      user('2'),
      say('b'),
      user('3'),
      say('c'),
      user('4'),
      say('d'),
    ]
    const selection = select(history)
    expect(selection.tail).toEqual([user('3'), say('c'), user('4'), say('d')])
    expect(selection.retainedUsers).toEqual([user('1'), user('2')])
  })

  it('stops at an incomplete older group', () => {
    const history = [
      user('1'),
      say('a'),
      user('2'),
      call('x'),
      say('no result'),
      user('3'),
      say('b'),
    ]
    const selection = select(history)
    expect(selection.tail).toEqual([user('3'), say('b')])
    expect(selection.retainedUsers).toEqual([user('1'), user('2')])
  })

  it('keeps an oversized newest group as bounded previews with ids and names', () => {
    const huge = 'line of output\n'.repeat(20_000)
    const bigArgs = JSON.stringify({ content: 'x'.repeat(50_000) })
    const history: HistoryMessage[] = [
      ...scriptedHistory(1, 20),
      user('write the report'),
      {
        role: 'assistant',
        content: 'writing',
        tool_calls: [{ id: 'w1', name: 'write_file', arguments: bigArgs }],
      },
      result('w1', huge),
      say(huge),
    ]
    const selection = select(history, '.vtcode/history/s_0003_20260823T010203Z.jsonl')
    expect(selection.previewed).toBe(true)
    expect(selection.tail.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
    const [, writer, output, final] = selection.tail
    expect(writer).toMatchObject({
      tool_calls: [{ id: 'w1', name: 'write_file', arguments: '{}' }],
    })
    expect(output).toMatchObject({ role: 'tool', tool_call_id: 'w1' })
    for (const message of [output, final]) {
      expect(message?.content.length).toBeLessThan(9_000)
      expect(message?.content).toContain('characters omitted from this preview')
      expect(message?.content).toContain('.vtcode/history/s_0003_20260823T010203Z.jsonl')
      expect(message?.content.startsWith('line of output')).toBe(true)
    }
    expect(selection.tailTokens).toBeLessThan(CONTINUITY_TAIL_TARGET_TOKENS)
    assertNoOrphans(selection.tail)
  })

  it('retains up to 4 earlier user messages within 20,000 tokens, truncating the one that overflows', () => {
    const long = 'word '.repeat(60_000)
    const history = [
      user('a'),
      say('1'),
      user('b'),
      say('2'),
      user(long),
      say('3'),
      user('c'),
      say('4'),
      user('d'),
      say('5'),
      user('e'),
      say('6'),
    ]
    const selection = selectContinuity(history, { countTokens, targetTokens: 10 })
    expect(selection.tail).toEqual([user('e'), say('6')])
    expect(selection.retainedUsers.slice(1)).toEqual([user('c'), user('d')])
    const truncated = selection.retainedUsers[0]
    expect(truncated?.content.length).toBeLessThan(long.length)
    expect(truncated?.content.startsWith('word word')).toBe(true)
    expect(selection.retainedTokens).toBeLessThanOrEqual(20_000)
    expect(
      selectContinuity(history, { countTokens, targetTokens: 10, retainedUserMessages: 2 })
        .retainedUsers,
    ).toEqual([user('c'), user('d')])
  })

  it('leaves histories of ≤ 10 messages alone unless forced', () => {
    const ten = Array.from({ length: 10 }, (_, i) => user(String(i)))
    expect(tooShortToCompact(ten, { force: false })).toBe(true)
    expect(tooShortToCompact(ten, { force: true })).toBe(false)
    expect(tooShortToCompact([...ten, say('x')], { force: false })).toBe(false)
  })

  it('never leaves an orphaned call or result (property test over generated histories)', () => {
    let previewed = 0
    let trimmed = 0
    for (let seed = 1; seed <= 400; seed++) {
      const history = messyHistory(seed)
      const target = [200, 2_000, 20_000][seed % 3] as number
      const selection = selectContinuity(history, { countTokens, targetTokens: target })
      try {
        assertNoOrphans(selection.tail)
        assertNoOrphans([...selection.retainedUsers, ...selection.tail])
      } catch (error) {
        throw new Error(`seed ${seed}: ${(error as Error).message}`)
      }
      expect(selection.retainedUsers.length).toBeLessThanOrEqual(4)
      expect(selection.retainedUsers.every((m) => m.role === 'user')).toBe(true)
      if (!selection.previewed) {
        expect(selection.tailTokens).toBeLessThanOrEqual(target)
        // contiguous and verbatim (system messages are left out)
        expect(selection.tail).toEqual(
          history
            .slice(selection.tailStart)
            .filter((m) => m.role !== 'system')
            .slice(0, selection.tail.length),
        )
      }
      if (selection.previewed) previewed++
      if (selection.droppedFromNewest > 0) trimmed++
    }
    // the generator really exercises the hard paths
    expect(previewed).toBeGreaterThan(20)
    expect(trimmed).toBeGreaterThan(20)
  }, 60_000) // a property test over thousands of histories: seconds alone, longer on a loaded machine
})

describe('continuity tail of many small groups', () => {
  /**
   * Element steps of array iteration while `work` runs: spreading an array steps through it, so
   * a tail built by prepending each group to a copy of the tail so far steps the square of its
   * groups (5,000 one-word user messages: 12.5 million steps, ≈ 0.3 s of the server's thread).
   */
  function iterationSteps(work: () => void): number {
    const original = Array.prototype[Symbol.iterator]
    let steps = 0
    Array.prototype[Symbol.iterator] = function counted(this: unknown[]) {
      const inner = original.call(this)
      return {
        next: () => {
          steps += 1
          return inner.next()
        },
        [Symbol.iterator]() {
          return this
        },
      } as ArrayIterator<unknown>
    }
    try {
      work()
    } finally {
      Array.prototype[Symbol.iterator] = original
    }
    return steps
  }

  it('builds the tail in steps linear in the history', () => {
    const history = Array.from({ length: 4_000 }, (_, i) => user(`word ${i}`))
    let tail: readonly HistoryMessage[] = []
    const steps = iterationSteps(() => {
      tail = select(history).tail
    })
    expect(tail.length).toBeGreaterThan(1_000)
    expect(tail).toEqual(history.slice(history.length - tail.length))
    expect(steps).toBeLessThan(20 * history.length)
  })
})

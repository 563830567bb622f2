import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { loadTokenizer } from '../../src/core/compaction/bpe-tokenizer.ts'
import { ContextMeter } from '../../src/core/compaction/context-meter.ts'
import {
  countingPieces,
  PIECE_CHARS,
  RUN_CHARS,
} from '../../src/core/compaction/counting-pieces.ts'
import { MESSAGE_OVERHEAD_TOKENS, TokenCounter } from '../../src/core/compaction/token-counter.ts'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { utf8Length } from '../../src/shared/utf8-length.ts'
import { seededRandom } from '../support/compaction-histories.ts'
import { spyTokenizer } from '../support/spy-tokenizer.ts'
import { shapedText, TEXT_SHAPES } from '../support/text-shapes.ts'

/**
 * Token counting is linear and never holds the thread for long: texts are counted as bounded
 * pieces (gpt-tokenizer is quadratic in one run without spaces), each cut adds a token so the
 * sum errs high, and long texts are counted only by `warm`, which yields between pieces.
 */
const PLAIN = { disallowedSpecial: new Set<string>() }

/** The longest run of spaces or of non-spaces in a text. */
function longestRun(text: string): number {
  let longest = 0
  let run = 0
  let previous: boolean | undefined
  for (const char of text) {
    const space = /\s/.test(char)
    run = space === previous ? run + char.length : char.length
    previous = space
    longest = Math.max(longest, run)
  }
  return longest
}

describe('counting pieces', () => {
  it('cut any text into bounded pieces that join back into it, never inside a surrogate pair', () => {
    const random = seededRandom(5)
    const texts = TEXT_SHAPES.map((shape) => shapedText(shape, 20_000))
    texts.push('🙂'.repeat(3000), `${' '.repeat(5000)}x`, '\n'.repeat(4000), 'a b '.repeat(3000))
    texts.push(Array.from({ length: 8000 }, () => (random() < 0.5 ? '中' : '🙂')).join(''))
    for (const text of texts) {
      const pieces = countingPieces(text)
      expect(pieces.join('')).toBe(text)
      for (const piece of pieces) {
        expect(piece.length).toBeGreaterThan(0)
        expect(piece.length).toBeLessThanOrEqual(PIECE_CHARS + RUN_CHARS)
        expect(longestRun(piece)).toBeLessThanOrEqual(RUN_CHARS + 1)
        const first = piece.charCodeAt(0)
        expect(first >= 0xdc00 && first <= 0xdfff).toBe(false)
      }
    }
    expect(countingPieces('short text')).toEqual(['short text'])
  })

  it('count at or a little above the exact count, for every shape and both encodings', async () => {
    const encodings = [
      { tokenizer: await loadTokenizer('o200k_base'), exact: o200k },
      { tokenizer: await loadTokenizer('cl100k_base'), exact: cl100k },
    ]
    // Small enough for the library's whole-text count (quadratic in a run) to finish quickly.
    for (const shape of TEXT_SHAPES) {
      for (const seed of [1, 2]) {
        const text = shapedText(shape, 6000, seed)
        for (const { tokenizer, exact } of encodings) {
          const expected = exact(text, PLAIN)
          const counted = tokenizer.count(text)
          const cuts = countingPieces(text).length - 1
          const label = `${shape} ${tokenizer.encoding}`
          expect(counted, label).toBeGreaterThanOrEqual(expected)
          // A cut costs its own token and at most one token split in two.
          expect(counted, label).toBeLessThanOrEqual(expected + 2 * cuts)
        }
      }
    }
  })
})

describe('token counter on long texts', () => {
  it('takes an unwarmed long text at its byte bound, without tokenizing it', async () => {
    const tokenizer = spyTokenizer()
    const counter = new TokenCounter(tokenizer)
    const text = shapedText('minified-js', 50_000)
    const message: HistoryMessage = { role: 'tool', tool_call_id: 'call_1', content: text }
    expect(counter.countMessage(message)).toBe(
      MESSAGE_OVERHEAD_TOKENS + utf8Length(text) + approximateTokenizer.count('call_1'),
    )
    expect(tokenizer.calls).toEqual(['call_1'])
    expect(counter.stats.tokenizedMessages).toBe(0)

    tokenizer.calls.length = 0
    await counter.warm([message])
    expect(tokenizer.calls.length).toBeGreaterThan(20)
    for (const call of tokenizer.calls)
      expect(call.length).toBeLessThanOrEqual(PIECE_CHARS + RUN_CHARS)
    const pieces = countingPieces(text)
    const exact =
      MESSAGE_OVERHEAD_TOKENS +
      pieces.length -
      1 +
      pieces.reduce((sum, piece) => sum + approximateTokenizer.count(piece), 0) +
      approximateTokenizer.count('call_1')
    tokenizer.calls.length = 0
    expect(counter.countMessage(message)).toBe(exact)
    expect(counter.countMessage(structuredClone(message))).toBe(exact)
    expect(tokenizer.calls).toEqual([])
    expect(exact).toBeLessThan(utf8Length(text))
  })

  it('gives the event loop turns while it measures a long input, and never counts low', async () => {
    const tokenizer = await loadTokenizer('o200k_base')
    const meter = new ContextMeter(async () => tokenizer, 'gpt-4o', undefined)
    const text = shapedText('base64', 120_000, 9)
    const history: HistoryMessage[] = [
      { role: 'user', content: 'decode this' },
      { role: 'assistant', content: 'send it' },
      { role: 'user', content: text },
    ]
    let turns = 0
    const timer = setInterval(() => turns++, 0)
    const reading = await meter.measure(history, { systemPrompt: 'Be brief.', tools: [] }, 0)
    clearInterval(timer)
    // The whole count would be one synchronous stretch of hundreds of milliseconds.
    expect(turns).toBeGreaterThan(3)
    expect(reading.bound).toBe(false)
    expect(reading.tokens).toBeGreaterThanOrEqual(o200k(text, PLAIN))
    expect(reading.tokens).toBeLessThan(utf8Length(text))
    // What the meter counted in slices is what the tokenizer counts for the whole text.
    const counter = await meter.counter()
    expect(counter.countMessage(history[2] as HistoryMessage)).toBe(
      MESSAGE_OVERHEAD_TOKENS + tokenizer.count(text),
    )
  })

  it('stops counting once the count reaches the ceiling of the decision', async () => {
    const tokenizer = spyTokenizer()
    const meter = new ContextMeter(async () => tokenizer, 'gpt-4o', undefined)
    const history: HistoryMessage[] = [{ role: 'user', content: shapedText('base64', 1_000_000) }]
    const reading = await meter.measure(history, { systemPrompt: undefined, tools: [] }, 0, 1000)
    expect(reading.tokens).toBeGreaterThanOrEqual(1000)
    // A few pieces, not the whole megabyte; and the partial figure is not cached.
    const counted = tokenizer.calls.reduce((sum, text) => sum + text.length, 0)
    expect(counted).toBeLessThan(10_000)
    expect((await meter.counter()).stats.tokenizedMessages).toBe(0)
  })
})

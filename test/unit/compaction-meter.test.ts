import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { loadTokenizer } from '../../src/core/compaction/bpe-tokenizer.ts'
import { ContextMeter, messageBound, utf8Length } from '../../src/core/compaction/context-meter.ts'
import { TokenCounter } from '../../src/core/compaction/token-counter.ts'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { seededRandom } from '../support/compaction-histories.ts'

const ALPHABET = [
  'a',
  'Z',
  ' ',
  '\n',
  '{',
  'é',
  'ß',
  '中',
  '文',
  '🙂',
  '👩‍💻',
  '<|endoftext|>',
  '0',
]

function randomText(random: () => number, length: number): string {
  let text = ''
  for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length)]
  return text
}

describe('context meter', () => {
  it('counts UTF-8 bytes as TextEncoder does', () => {
    const random = seededRandom(3)
    for (let i = 0; i < 200; i++) {
      const text = randomText(random, 1 + Math.floor(random() * 60))
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length)
    }
  })

  it('bounds the o200k and cl100k counts of any message from above', async () => {
    const random = seededRandom(11)
    const counters = [
      new TokenCounter(await loadTokenizer('o200k_base')),
      new TokenCounter(await loadTokenizer('cl100k_base')),
      new TokenCounter(approximateTokenizer),
    ]
    for (let i = 0; i < 300; i++) {
      const text = randomText(random, Math.floor(random() * 200))
      const message: HistoryMessage =
        i % 3 === 0
          ? { role: 'tool', tool_call_id: `call_${i}`, content: text }
          : i % 3 === 1
            ? {
                role: 'assistant',
                content: text,
                tool_calls: [{ id: `c${i}`, name: 'exec_command', arguments: `{"cmd":"${text}"}` }],
              }
            : { role: 'user', content: text }
      for (const counter of counters) {
        expect(messageBound(message)).toBeGreaterThanOrEqual(counter.countMessage(message))
      }
    }
  })

  it('loads the tokenizer only when the bound reaches the limit, starting from the anchor', async () => {
    const loads: string[] = []
    const meter = new ContextMeter(
      async (model) => {
        loads.push(model)
        return approximateTokenizer
      },
      'gpt-4o',
      { input_tokens: 1000, message_count: 2 },
    )
    const history: HistoryMessage[] = [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: 'x'.repeat(400) },
    ]
    const prefix = { systemPrompt: 'Be brief.', tools: [] }
    expect(await meter.measure(history, prefix, 2000)).toEqual({ tokens: 1403, bound: true })
    expect(loads).toEqual([])
    expect(await meter.measure(history, prefix, 1200)).toEqual({ tokens: 1103, bound: false })
    expect(loads).toEqual(['gpt-4o'])
    meter.clear()
    // Without an anchor: the prefix and every message are counted.
    const full = await meter.measure(history, prefix, 0)
    expect(full.tokens).toBe(3 + 3 + 3 + 3 + 2 + 3 + 1 + 3 + 100)
    expect(loads).toHaveLength(1)
  })
})

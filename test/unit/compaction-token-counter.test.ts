import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import {
  encodingForModel,
  loadTokenizer,
  tokenizerForModel,
} from '../../src/core/compaction/bpe-tokenizer.ts'
import { MESSAGE_OVERHEAD_TOKENS, TokenCounter } from '../../src/core/compaction/token-counter.ts'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { scriptedHistory } from '../support/compaction-histories.ts'
import { spyTokenizer } from '../support/spy-tokenizer.ts'

const clone = (history: readonly HistoryMessage[]) => structuredClone([...history])

describe('token counter', () => {
  it('picks the encoding by model', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'openai/gpt-4.1',
      'gpt-4.5-preview',
      'gpt-5',
      'gpt-5-mini',
      'o1',
      'o3-mini',
      'o4-mini',
      'chatgpt-4o-latest',
      'gpt-oss-120b',
      'llama3.1:8b',
    ]) {
      expect(encodingForModel(model), model).toBe('o200k_base')
    }
    for (const model of [
      'gpt-4',
      'gpt-4-turbo',
      'gpt-4-0613',
      'gpt-4-32k',
      'gpt-3.5-turbo',
      'GPT-3.5-turbo-16k',
      'text-embedding-3-small',
      'davinci-002',
    ]) {
      expect(encodingForModel(model), model).toBe('cl100k_base')
    }
  })

  it('loads each encoding lazily, once, and counts special-token text as plain text', async () => {
    const o200k = await tokenizerForModel('gpt-4o')
    expect(o200k.encoding).toBe('o200k_base')
    expect(await loadTokenizer('o200k_base')).toBe(o200k)
    expect(o200k.count('hello world')).toBe(2)
    expect(o200k.count('say <|endoftext|> now')).toBeGreaterThan(3)
    const cl100k = await tokenizerForModel('gpt-4')
    expect(cl100k.encoding).toBe('cl100k_base')
    // the two vocabularies split this differently
    const text = 'Compaction boundaries freeze the prompt prefix; 模型 上下文 压缩.'
    expect(cl100k.count(text)).not.toBe(o200k.count(text))
  })

  it('counts a grown transcript by tokenizing only the new messages', () => {
    const tokenizer = spyTokenizer()
    const counter = new TokenCounter(tokenizer)
    const history = scriptedHistory(5, 30)
    const first = counter.estimate(history)
    expect(first).toMatchObject({ anchored: false, tokenized: history.length })
    const added: HistoryMessage[] = [
      { role: 'user', content: 'one more thing' },
      { role: 'assistant', content: 'sure' },
      { role: 'user', content: 'thanks' },
    ]
    history.push(...added)
    tokenizer.calls.length = 0
    const before = counter.stats
    const second = counter.estimate(history)
    expect(second.tokenized).toBe(3)
    // the unchanged prefix is not even looked up: only the 3 new messages are touched
    expect(counter.stats).toEqual({
      tokenizedMessages: before.tokenizedMessages + 3,
      cachedMessages: before.cachedMessages,
    })
    expect(tokenizer.calls).toEqual(['one more thing', 'sure', 'thanks'])
    const expected = added.reduce(
      (sum, m) => sum + MESSAGE_OVERHEAD_TOKENS + approximateTokenizer.count(m.content),
      0,
    )
    expect(second.tokens).toBe(first.tokens + expected)
    // nothing new → nothing tokenized, same figure
    tokenizer.calls.length = 0
    expect(counter.estimate(history)).toMatchObject({ tokens: second.tokens, tokenized: 0 })
    expect(tokenizer.calls).toEqual([])
  })

  it('does not re-tokenize a transcript rehydrated as new objects (content hash cache)', () => {
    const tokenizer = spyTokenizer()
    const counter = new TokenCounter(tokenizer)
    const history = scriptedHistory(9, 20)
    const first = counter.estimate(history)
    const rehydrated = clone(history)
    rehydrated.push({ role: 'assistant', content: 'new' })
    const second = counter.estimate(rehydrated)
    expect(second.tokenized).toBe(1)
    expect(second.tokens).toBe(first.tokens + MESSAGE_OVERHEAD_TOKENS + 1)
    // a changed message is counted again
    const edited = clone(rehydrated)
    edited[0] = { role: 'user', content: `${edited[0]?.content} (edited)` }
    expect(counter.estimate(edited).tokenized).toBe(1)
  })

  it('anchors on provider-reported usage and estimates only the messages added since', () => {
    const tokenizer = spyTokenizer()
    const history = scriptedHistory(11, 50)
    // a fresh counter (a new invocation) restored from the anchor kept in engine state
    const counter = new TokenCounter(tokenizer)
    counter.restoreAnchor({ input_tokens: 123_456, message_count: history.length })
    history.push({ role: 'assistant', content: 'abcdefgh' })
    const estimate = counter.estimate(history, 99_999)
    expect(estimate).toEqual({
      tokens: 123_456 + MESSAGE_OVERHEAD_TOKENS + 2,
      anchored: true,
      tokenized: 1,
    })
    expect(tokenizer.calls).toEqual(['abcdefgh'])
    // the provider's next report replaces the estimate
    counter.observeUsage(130_000, history.length)
    expect(counter.estimate(history)).toEqual({ tokens: 130_000, anchored: true, tokenized: 0 })
    // an anchor beyond the transcript (it was compacted) no longer applies
    const compacted = history.slice(-5)
    const fallback = counter.estimate(compacted, 500)
    expect(fallback.anchored).toBe(false)
    expect(fallback.tokens).toBeLessThan(130_000)
    counter.clearAnchor()
    expect(counter.anchor).toBeUndefined()
    expect(counter.estimate(history).anchored).toBe(false)
  })

  it('counts tool calls, tool results and the request prefix', () => {
    const counter = new TokenCounter(approximateTokenizer)
    const plain = counter.countMessage({ role: 'assistant', content: 'abcd' })
    const withCall = counter.countMessage({
      role: 'assistant',
      content: 'abcd',
      tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"src/index.ts"}' }],
    })
    expect(withCall).toBeGreaterThan(plain + 5)
    expect(
      counter.countPrefix('You are helpful.', [{ name: 'x', description: 'd', parameters: {} }]),
    ).toBeGreaterThan(counter.countPrefix('You are helpful.'))
    expect(counter.stats.tokenizedMessages).toBe(2)
  })
})

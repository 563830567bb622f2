import { describe, expect, it } from 'vitest'
import { chatRequestBody, chatRequestText } from '../../adapters/openai/chat-request-body.ts'
import { providerProfile } from '../../adapters/openai/provider-profile.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ModelRequest } from '../../src/ports/model-client.ts'

const transcript: HistoryMessage[] = [
  { role: 'system', content: 'You are careful. "Quotes", \\ and ü ✓ 😀' },
  { role: 'user', content: 'look up order 7' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"id":7}' }],
    reasoning: [{ type: 'text', text: 'I should look it up.', field: 'reasoning_content' }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
  { role: 'assistant', content: 'It shipped.' },
]

const base: ModelRequest = {
  model: 'gpt-4o-mini',
  api: 'chat',
  messages: transcript,
  tools: [],
}

const requests: [string, ModelRequest][] = [
  ['no tools', base],
  [
    'tools alone',
    {
      ...base,
      tools: [{ name: 'lookup', description: 'Look up', parameters: { type: 'object' } }],
    },
  ],
  ['options without tools', { ...base, temperature: 0, maxOutputTokens: 64 }],
  [
    'tools, a forced choice and every option',
    {
      ...base,
      tools: [{ name: 'lookup', description: 'Look up an order', parameters: { type: 'object' } }],
      toolChoice: { name: 'lookup' },
      parallelToolCalls: false,
      maxOutputTokens: 512,
      temperature: 0.25,
      topP: 0.5,
      reasoningEffort: 'low',
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      promptCacheKey: 'turnline-abc',
    },
  ],
]

describe('chatRequestText', () => {
  for (const provider of ['openai', 'deepseek', 'openrouter'] as const) {
    for (const [name, request] of requests) {
      it(`is the JSON of chatRequestBody, byte for byte (${provider}, ${name})`, () => {
        const profile = providerProfile(provider)
        const expected = JSON.stringify(chatRequestBody(request, profile))
        expect(chatRequestText(request, profile)).toBe(expected)
        // Again, each message's JSON now known, and with the transcript grown by one.
        expect(chatRequestText(request, profile)).toBe(expected)
        const grown = {
          ...request,
          messages: [...request.messages, { role: 'user' as const, content: 'and order 8?' }],
        }
        expect(chatRequestText(grown, profile)).toBe(
          JSON.stringify(chatRequestBody(grown, profile)),
        )
      })
    }
  }
})

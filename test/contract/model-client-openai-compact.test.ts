import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { HistoryMessageSchema } from '../../src/contract/history-message.ts'
import type { ModelClient, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

/** `responses.compact` through the real adapter against the mock server, and the compaction item. */
let mock: MockOpenAI
let client: ModelClient
beforeAll(async () => {
  mock = await startMockOpenAI()
  client = createOpenAIModelClient({
    baseURL: mock.baseURL,
    apiKey: 'test',
    maxRetries: 1,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  })
})
afterEach(() => {
  try {
    mock.assertDone()
  } finally {
    mock.reset()
  }
})
afterAll(async () => {
  await mock.close()
})

const item: HistoryMessage = {
  role: 'compaction',
  provider: 'openai',
  content: '',
  encrypted_content: 'enc-0',
  id: 'cmp_0',
}
const history: HistoryMessage[] = [
  item,
  { role: 'user', content: 'read a.txt' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'read', arguments: '{}' }] },
  { role: 'tool', tool_call_id: 'c1', content: 'A' },
  { role: 'assistant', content: 'It says A.' },
]

async function drain(events: AsyncIterable<ModelStreamEvent>): Promise<void> {
  for await (const _ of events);
}

describe('provider compaction in the OpenAI adapter', () => {
  it('sends the transcript and maps the compacted window back', async () => {
    mock.enqueue({
      api: 'compact',
      compaction: { encrypted_content: 'enc-1', id: 'cmp_1' },
      usage: { input_tokens: 120, output_tokens: 30 },
    })
    const result = await client.compact?.({
      model: 'gpt-5',
      messages: history,
      instructions: 'Be brief.',
    })
    expect(result).toEqual({
      messages: [
        { role: 'user', content: 'read a.txt' },
        { ...item, encrypted_content: 'enc-1', id: 'cmp_1' },
      ],
      usage: {
        input_tokens: 120,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 30,
      },
    })
    const [request] = mock.requests
    expect(request?.path).toBe('/v1/responses/compact')
    expect(request?.body).toEqual({
      model: 'gpt-5',
      instructions: 'Be brief.',
      input: [
        { type: 'compaction', encrypted_content: 'enc-0', id: 'cmp_0' },
        { type: 'message', role: 'user', content: 'read a.txt' },
        { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'A' },
        { type: 'message', role: 'assistant', content: 'It says A.' },
      ],
    })
  })

  it('retries a server error as streaming does, and gives up on a bad request at once', async () => {
    mock.enqueue({ api: 'compact', status: 500 }, { api: 'compact', compaction: {} })
    const ok = await client.compact?.({ model: 'gpt-5', messages: history })
    expect(ok?.messages.at(-1)).toMatchObject({
      role: 'compaction',
      encrypted_content: expect.stringMatching(/^enc_mock_\d+$/),
    })
    expect(mock.requests).toHaveLength(2)

    mock.enqueue({ api: 'compact', status: 400, code: 'invalid_value', message: 'bad input' })
    await expect(client.compact?.({ model: 'gpt-5', messages: history })).rejects.toMatchObject({
      code: 'model_error',
      details: { kind: 'bad_request', status: 400, attempts: 1 },
    })
  })

  it('streams a compaction item as a Responses input item; Chat refuses it clearly', async () => {
    mock.enqueue({ api: 'responses', text: 'ok' })
    await drain(client.stream({ model: 'gpt-5', api: 'responses', messages: history, tools: [] }))
    expect((mock.requests[0]?.body.input as unknown[] | undefined)?.[0]).toEqual({
      type: 'compaction',
      encrypted_content: 'enc-0',
      id: 'cmp_0',
    })

    const chat = client.stream({ model: 'gpt-4o', api: 'chat', messages: history, tools: [] })
    await expect(drain(chat)).rejects.toMatchObject({
      code: 'model_error',
      details: { kind: 'bad_request', code: 'unsupported_compaction_item' },
    })
    expect(mock.requests).toHaveLength(1)
  })

  it('keeps stored histories parsing and fills the empty content of a compaction item', () => {
    expect(HistoryMessageSchema.parse({ role: 'user', content: 'hi' })).toEqual({
      role: 'user',
      content: 'hi',
    })
    expect(
      HistoryMessageSchema.parse({
        role: 'compaction',
        provider: 'openai',
        encrypted_content: 'e',
      }),
    ).toEqual({ role: 'compaction', provider: 'openai', encrypted_content: 'e', content: '' })
    expect(() =>
      HistoryMessageSchema.parse({ role: 'compaction', provider: 'openai', encrypted_content: '' }),
    ).toThrow()
  })

  it('counts a compact request answered by an ordinary step as unexpected', async () => {
    mock.enqueue({ api: 'responses', text: 'not a compaction' })
    await expect(client.compact?.({ model: 'gpt-5', messages: history })).rejects.toMatchObject({
      code: 'model_error',
    })
    expect(() => mock.assertDone()).toThrow(/unexpected request #\d to \/v1\/responses\/compact/)
    mock.reset()
  })
})

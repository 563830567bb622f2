import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  createOpenAIModelClient,
  unconfiguredModelClient,
} from '../../adapters/openai/openai-model-client.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type {
  ModelApi,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ToolDefinition,
} from '../../src/ports/model-client.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

let mock: MockOpenAI

beforeAll(async () => {
  mock = await startMockOpenAI()
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

const tools: ToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
]

const history: HistoryMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Read a.txt', intent_id: 'int_1' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'hello' },
  { role: 'assistant', content: 'It says hello.' },
  { role: 'user', content: 'Thanks' },
]

function request(api: ModelApi, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'gpt-4.1-mini', api, messages: history, tools, ...extra }
}

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = []
  for await (const event of events) out.push(event)
  return out
}

function completed(events: ModelStreamEvent[]): ModelResponse {
  const last = events.at(-1)
  expect(last?.type).toBe('completed')
  expect(events.filter((e) => e.type === 'completed')).toHaveLength(1)
  if (last?.type !== 'completed') throw new Error('no completed event')
  return last.response
}

const textOf = (events: ModelStreamEvent[]) =>
  events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []))

const client = () => createOpenAIModelClient({ apiKey: 'sk-test', baseURL: mock.baseURL })

describe.each(['chat', 'responses'] as const)('OpenAI adapter, %s API', (api) => {
  it('streams text deltas in order and completes with normalized usage', async () => {
    mock.enqueue({
      api,
      text: 'The quick brown fox jumps.',
      chunkSize: 5,
      usage: { input_tokens: 1200, cached_input_tokens: 1024, output_tokens: 7 },
    })
    const events = await collect(client().stream(request(api)))
    expect(textOf(events)).toEqual(['The q', 'uick ', 'brown', ' fox ', 'jumps', '.'])
    const response = completed(events)
    expect(response.text).toBe('The quick brown fox jumps.')
    expect(response.toolCalls).toEqual([])
    expect(response.stopReason).toBe('stop')
    expect(response.usage).toEqual({
      input_tokens: 1200,
      cached_input_tokens: 1024,
      cache_creation_tokens: 0,
      output_tokens: 7,
    })
  })

  it('sends temperature and top_p only when set', async () => {
    mock.enqueue({ api, text: 'a' }, { api, text: 'b' })
    await collect(client().stream({ ...request(api), temperature: 0.3, topP: 0.9 }))
    await collect(client().stream(request(api)))
    const [set, unset] = mock.requests.slice(-2).map((r) => r.body as Record<string, unknown>)
    expect(set).toMatchObject({ temperature: 0.3, top_p: 0.9 })
    expect(unset).not.toHaveProperty('temperature')
    expect(unset).not.toHaveProperty('top_p')
  })

  it('assembles tool calls whose arguments arrive split across chunks', async () => {
    const first = '{"path":"src/index.ts"}'
    const second = '{"path":"README.md"}'
    mock.enqueue({
      api,
      chunkSize: 3,
      toolCalls: [
        { id: 'call_a', name: 'read_file', arguments: first },
        { id: 'call_b', name: 'read_file', arguments: second },
      ],
    })
    const events = await collect(client().stream(request(api)))
    const deltas = events.flatMap((e) => (e.type === 'tool_call_delta' ? [e] : []))
    expect(deltas.filter((d) => d.argumentsDelta !== '').length).toBeGreaterThan(10)
    expect(deltas[0]).toMatchObject({ index: 0, id: 'call_a', name: 'read_file' })
    const joined = (index: number) =>
      deltas
        .filter((d) => d.index === index)
        .map((d) => d.argumentsDelta)
        .join('')
    expect(joined(0)).toBe(first)
    expect(joined(1)).toBe(second)
    const response = completed(events)
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: first },
      { id: 'call_b', name: 'read_file', arguments: second },
    ])
    expect(response.stopReason).toBe('tool_calls')
  })

  it('streams reasoning separately from the answer', async () => {
    mock.enqueue({ api, reasoning: 'Think first.', text: 'Done.' })
    const events = await collect(client().stream(request(api)))
    const thoughts = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : []))
    expect(thoughts.join('')).toBe('Think first.')
    const response = completed(events)
    expect(response.reasoning).toBe('Think first.')
    expect(response.text).toBe('Done.')
  })

  it('reports a truncated answer as stopReason length', async () => {
    mock.enqueue({ api, text: 'Partial', finishReason: 'length' })
    const response = completed(await collect(client().stream(request(api))))
    expect(response.stopReason).toBe('length')
    expect(response.text).toBe('Partial')
  })

  it('reports zero usage when the server sends none', async () => {
    mock.enqueue({ api, text: 'ok', usage: null })
    const response = completed(await collect(client().stream(request(api))))
    expect(response.usage).toEqual({
      input_tokens: 0,
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      output_tokens: 0,
    })
  })

  it('works keyless against an OpenAI-compatible baseURL', async () => {
    mock.enqueue({ api, text: 'local' })
    const local = createOpenAIModelClient({ baseURL: mock.baseURL })
    const response = completed(await collect(local.stream(request(api))))
    expect(response.text).toBe('local')
  })
})

describe('request mapping', () => {
  it('sends chat messages, tools and streaming options as Chat Completions expects', async () => {
    mock.enqueue({ api: 'chat', text: 'ok' })
    await collect(client().stream(request('chat', { maxOutputTokens: 256 })))
    const [sent] = mock.requests
    expect(sent?.headers.authorization).toBe('Bearer sk-test')
    expect(sent?.body).toMatchObject({
      model: 'gpt-4.1-mini',
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 256,
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a file',
            parameters: tools[0]?.parameters,
          },
        },
      ],
    })
    expect(sent?.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Read a.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'hello' },
      { role: 'assistant', content: 'It says hello.' },
      { role: 'user', content: 'Thanks' },
    ])
  })

  it('sends Responses input items and function tools', async () => {
    mock.enqueue({ api: 'responses', text: 'ok' })
    await collect(client().stream(request('responses', { maxOutputTokens: 256 })))
    const [sent] = mock.requests
    expect(sent?.body).toMatchObject({
      model: 'gpt-4.1-mini',
      stream: true,
      store: false,
      max_output_tokens: 256,
      tools: [
        {
          type: 'function',
          name: 'read_file',
          description: 'Read a file',
          parameters: tools[0]?.parameters,
          strict: false,
        },
      ],
    })
    expect(sent?.body.input).toEqual([
      { type: 'message', role: 'system', content: 'You are terse.' },
      { type: 'message', role: 'user', content: 'Read a.txt' },
      {
        type: 'function_call',
        call_id: 'call_1',
        name: 'read_file',
        arguments: '{"path":"a.txt"}',
      },
      { type: 'function_call_output', call_id: 'call_1', output: 'hello' },
      { type: 'message', role: 'assistant', content: 'It says hello.' },
      { type: 'message', role: 'user', content: 'Thanks' },
    ])
  })

  it('omits tools when none are offered', async () => {
    mock.enqueue({ api: 'chat', text: 'ok' }, { api: 'responses', text: 'ok' })
    await collect(client().stream(request('chat', { tools: [] })))
    await collect(client().stream(request('responses', { tools: [] })))
    expect(mock.requests.map((r) => 'tools' in r.body)).toEqual([false, false])
  })

  it('sends an output schema as the strict JSON-schema format of each API', async () => {
    const outputSchema = {
      type: 'object',
      properties: { verdict: { type: 'string' } },
      required: ['verdict'],
      additionalProperties: false,
    }
    mock.enqueue(
      { api: 'chat', text: '{"verdict":"ok"}' },
      { api: 'responses', text: '{"verdict":"ok"}' },
      { api: 'chat', text: 'plain' },
    )
    await collect(client().stream(request('chat', { outputSchema })))
    await collect(client().stream(request('responses', { outputSchema })))
    await collect(client().stream(request('chat')))
    const [chat, responses, plain] = mock.requests.map((r) => r.body)
    expect(chat?.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'turnline_output', schema: outputSchema, strict: true },
    })
    expect(responses?.text).toEqual({
      format: { type: 'json_schema', name: 'turnline_output', schema: outputSchema, strict: true },
    })
    expect(chat?.tools).toBeDefined()
    expect(plain && 'response_format' in plain).toBe(false)
  })
})

describe('no model configured', () => {
  it('refuses to build a client without an API key or a baseURL', () => {
    expect(() => createOpenAIModelClient({})).toThrow(
      expect.objectContaining({ code: 'model_not_configured' }),
    )
  })

  it('offers a stand-in client whose streams fail with model_not_configured', async () => {
    const error = await collect(unconfiguredModelClient.stream(request('chat'))).catch((e) => e)
    expect(error).toMatchObject({ code: 'model_not_configured', retryable: false })
    expect(String(error.message)).toContain('OPENAI_API_KEY')
  })
})

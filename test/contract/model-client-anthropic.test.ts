import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createAnthropicModelClient } from '../../adapters/anthropic/anthropic-model-client.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type {
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from '../../src/ports/model-client.ts'
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts'
import { requestViolation } from '../support/mock-anthropic-rules.ts'

/**
 * The Anthropic adapter against the mock Messages API (test/support/mock-anthropic.ts), which
 * holds every request to the API's rules: what the adapter streams, what it sends back, how it
 * counts prompt caching, and which failures it retries.
 */
let mock: MockAnthropic
let client: ModelClient

beforeAll(async () => {
  mock = await startMockAnthropic()
  client = createAnthropicModelClient({
    baseURL: mock.baseURL,
    apiKey: 'sk-ant-contract',
    maxRetries: 2,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  })
})
afterEach(() => {
  mock.reset()
})
afterAll(async () => {
  await mock.close()
})

const MODEL = 'claude-opus-4-5'
const TOOL = { name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } }

function request(messages: HistoryMessage[], fields: Partial<ModelRequest> = {}): ModelRequest {
  return { model: MODEL, api: 'anthropic', messages, tools: [TOOL], ...fields }
}

async function run(
  req: ModelRequest,
): Promise<{ events: ModelStreamEvent[]; answer: ModelResponse }> {
  const events: ModelStreamEvent[] = []
  for await (const event of client.stream(req)) events.push(event)
  const last = events.at(-1)
  if (last?.type !== 'completed') throw new Error('the stream did not complete')
  return { events, answer: last.response }
}

/** The failure a stream ends with. */
async function failure(req: ModelRequest): Promise<{ error: unknown; events: ModelStreamEvent[] }> {
  const events: ModelStreamEvent[] = []
  try {
    for await (const event of client.stream(req)) events.push(event)
  } catch (error) {
    return { error, events }
  }
  throw new Error('the stream did not fail')
}

/** The transcript after an answer: the assistant message as the engine keeps it, then results. */
function answered(answer: ModelResponse, results: string[] = []): HistoryMessage[] {
  return [
    {
      role: 'assistant',
      content: answer.text,
      ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}),
      ...(answer.reasoningBlocks ? { reasoning: answer.reasoningBlocks } : {}),
    } as HistoryMessage,
    ...answer.toolCalls.map((call, i) => ({
      role: 'tool' as const,
      tool_call_id: call.id,
      content: results[i] ?? 'ok',
    })),
  ]
}

const system: HistoryMessage = { role: 'system', content: 'You are a coding agent. '.repeat(40) }
const user = (content: string): HistoryMessage => ({ role: 'user', content })

describe('Anthropic adapter against the mock Messages API', () => {
  it('streams text with the SDK headers and counts the first request as a cache write', async () => {
    mock.enqueue({ text: 'Hello there, how can I help?' })
    const { events, answer } = await run(request([system, user('Hi')]))
    expect(events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(1)
    expect(answer).toMatchObject({ text: 'Hello there, how can I help?', stopReason: 'end_turn' })
    expect(answer.usage.cached_input_tokens).toBe(0)
    expect(answer.usage.cache_creation_tokens).toBeGreaterThan(0)
    expect(answer.usage.input_tokens).toBeGreaterThanOrEqual(answer.usage.cache_creation_tokens)
    const [sent] = mock.requests
    expect(sent?.path).toBe('/v1/messages')
    expect(sent?.headers).toMatchObject({
      authorization: 'Bearer sk-ant-contract',
      'anthropic-version': '2026-10-21',
    })
  })

  it('sends the documents of a user message as base64 document blocks after its text', async () => {
    mock.enqueue({ text: 'Quarterly report' })
    const data = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64')
    await run(
      request([
        system,
        {
          role: 'user',
          content: 'Title?',
          files: [{ filename: 'report.pdf', media_type: 'application/pdf', data }],
        },
      ]),
    )
    const messages = mock.requests[0]?.body.messages as { content: unknown }[]
    expect(messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'Title?' },
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data },
        title: 'report.pdf',
      },
    ])
  })

  it('round-trips signed thinking through a tool loop, and the next request reads the cache', async () => {
    mock.enqueue(
      {
        thinking: 'The user wants the README; read it first.',
        text: 'Reading it.',
        toolCalls: [
          { name: 'read_file', arguments: '{"path":"README.md"}' },
          { name: 'read_file', arguments: '{"path":"package.json"}' },
        ],
      },
      { thinking: 'Both files are here.', text: 'It is a TypeScript service.' },
    )
    const effort = { reasoningEffort: 'low' as const }
    const history = [system, user('What is this repository?')]
    const first = await run(request(history, effort))
    expect(first.answer.reasoning).toBe('The user wants the README; read it first.')
    expect(first.answer.toolCalls.map((call) => call.arguments)).toEqual([
      '{"path":"README.md"}',
      '{"path":"package.json"}',
    ])
    expect(first.answer.stopReason).toBe('tool_use')
    history.push(...answered(first.answer, ['# Turnline', '{"name":"turnline"}']))
    // The mock refuses a thinking block without its signature and tool uses without results.
    const second = await run(request(history, effort))
    expect(second.answer.text).toBe('It is a TypeScript service.')
    expect(second.answer.usage.cached_input_tokens).toBeGreaterThan(0)
    expect(second.answer.usage.cached_input_tokens).toBe(first.answer.usage.cache_creation_tokens)
    const body = mock.requests[1]?.body as { messages: { content: { type: string }[] }[] }
    expect(body.messages[1]?.content.map((block) => block.type)).toEqual([
      'thinking',
      'text',
      'tool_use',
      'tool_use',
    ])
  })

  it('sends a redacted_thinking block back unchanged', async () => {
    mock.enqueue(
      { redacted: true, toolCalls: [{ name: 'read_file', arguments: '{}' }] },
      { text: 'Done.' },
    )
    const effort = { reasoningEffort: 'high' as const }
    const history = [user('Go')]
    const first = await run(request(history, effort))
    expect(first.answer.reasoningBlocks).toMatchObject([{ type: 'anthropic_redacted_thinking' }])
    history.push(...answered(first.answer))
    expect((await run(request(history, effort))).answer.text).toBe('Done.')
  })

  it('is refused by the mock, as by the API, when the thinking block is not sent back', async () => {
    mock.enqueue({ thinking: 'Plan.', toolCalls: [{ name: 'read_file', arguments: '{}' }] })
    const effort = { reasoningEffort: 'low' as const }
    const history = [user('Go')]
    const first = await run(request(history, effort))
    const { reasoningBlocks: _, ...stripped } = first.answer
    history.push(...answered(stripped))
    const { error } = await failure(request(history, effort))
    expect(String(error)).toContain('Expected `thinking` or `redacted_thinking`')
    expect(error).toMatchObject({ details: { kind: 'bad_request', status: 400 } })
    expect(() => mock.assertDone()).toThrow(/refused/)
  })

  it('is refused by the mock when text comes before the tool results', () => {
    const body = {
      model: MODEL,
      max_tokens: 10,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'x', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'and' },
            { type: 'tool_result', tool_use_id: 't1', content: [] },
          ],
        },
      ],
    }
    expect(requestViolation(body, new Set())).toContain(
      'Did not find 1 tool_result block(s) at the beginning of this message',
    )
  })

  it('retries an overloaded 529 and an error event that arrives before any output', async () => {
    mock.enqueue(
      { status: 529 },
      { text: 'never seen', streamError: { type: 'overloaded_error', message: 'Overloaded' } },
      { text: 'Third time.' },
    )
    const { answer } = await run(request([user('Hi')]))
    expect(answer.text).toBe('Third time.')
    expect(mock.requests).toHaveLength(3)
  })

  it('does not retry an error event once text has streamed', async () => {
    mock.enqueue({
      text: 'Half an answer that goes on',
      streamError: { type: 'overloaded_error', message: 'Overloaded', afterFrames: 5 },
    })
    const { error, events } = await failure(request([user('Hi')]))
    expect(events.some((e) => e.type === 'text_delta')).toBe(true)
    expect(error).toMatchObject({
      code: 'model_error',
      details: { kind: 'server', code: 'overloaded_error', attempts: 1 },
    })
    expect(mock.requests).toHaveLength(1)
  })

  it('honours retry-after on 429, retries a cut before output, fails one after it', async () => {
    mock.enqueue(
      { status: 429, headers: { 'retry-after': '0' } },
      { text: 'A long answer cut short', disconnectAfterFrames: 2 },
      { text: 'A long answer cut short', disconnectAfterFrames: 4 },
    )
    const { error, events } = await failure(request([user('Hi')]))
    expect(events).toEqual([{ type: 'text_delta', text: 'A long', part: 0 }])
    expect(error).toMatchObject({ details: { kind: 'network', attempts: 3 } })
    expect(mock.requests).toHaveLength(3)
  })

  it('classes "prompt is too long" as a context overflow, not retried', async () => {
    mock.enqueue({ status: 400, message: 'prompt is too long: 212345 tokens > 200000 maximum' })
    const { error } = await failure(request([user('Hi')]))
    expect(error).toMatchObject({ details: { kind: 'context_overflow', attempts: 1 } })
    expect(mock.requests).toHaveLength(1)
  })

  it("fails auth at once; the API message is the operator's, not the caller's", async () => {
    mock.enqueue({ status: 401, message: 'invalid x-api-key' })
    const { error } = await failure(request([user('Hi')]))
    expect(error).toMatchObject({ details: { kind: 'auth', status: 401, attempts: 1 } })
    expect(String(error)).not.toContain('invalid x-api-key')
    expect(error).toMatchObject({ logDetails: { provider_message: 'invalid x-api-key' } })
  })

  it('names the variables configuration reads when given no credential', () => {
    expect(() => createAnthropicModelClient({})).toThrow(
      'needs an API key (ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL alone for a gateway that needs none) or a bearer token (ANTHROPIC_AUTH_TOKEN).',
    )
  })

  it('reports max_tokens and refusal stop reasons as given', async () => {
    mock.enqueue({ text: 'Cut', stopReason: 'max_tokens' }, { text: '', stopReason: 'refusal' })
    expect((await run(request([user('a')]))).answer.stopReason).toBe('max_tokens')
    expect((await run(request([user('b')]))).answer.stopReason).toBe('refusal')
  })
})

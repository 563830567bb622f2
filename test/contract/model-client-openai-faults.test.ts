import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  createOpenAIModelClient,
  type OpenAIModelClientOptions,
} from '../../adapters/openai/openai-model-client.ts'
import { AUTH_FAILURE_TEXT } from '../../adapters/shared/model-failure.ts'
import { isTurnlineError, type TurnlineError } from '../../src/contract/errors.ts'
import type { ModelApi, ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
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

const fast = { baseDelayMs: 5, maxDelayMs: 20 }

function client(options: Partial<OpenAIModelClientOptions> = {}) {
  return createOpenAIModelClient({
    apiKey: 'sk-test',
    baseURL: mock.baseURL,
    retry: fast,
    ...options,
  })
}

function request(api: ModelApi, signal?: AbortSignal): ModelRequest {
  return {
    model: 'gpt-4o',
    api,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    ...(signal ? { signal } : {}),
  }
}

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = []
  for await (const event of events) out.push(event)
  return out
}

async function failure(events: AsyncIterable<ModelStreamEvent>): Promise<TurnlineError> {
  try {
    await collect(events)
  } catch (error) {
    if (isTurnlineError(error)) return error
    throw error
  }
  throw new Error('expected the stream to fail')
}

describe.each(['chat', 'responses'] as const)('OpenAI adapter faults, %s API', (api) => {
  it('retries a 429 and then succeeds', async () => {
    mock.enqueue({ api, status: 429, code: 'rate_limit_exceeded' }, { api, text: 'ok' })
    const events = await collect(client().stream(request(api)))
    expect(events.at(-1)).toMatchObject({ type: 'completed', response: { text: 'ok' } })
    expect(mock.requests).toHaveLength(2)
  })

  it('honours retry-after-ms before retrying', async () => {
    mock.enqueue({ api, status: 429, headers: { 'retry-after-ms': '250' } }, { api, text: 'ok' })
    const started = performance.now()
    await collect(client().stream(request(api)))
    expect(performance.now() - started).toBeGreaterThanOrEqual(240)
    expect(mock.requests).toHaveLength(2)
  })

  it('gives up at once when Retry-After exceeds the wait bound, and reports it', async () => {
    mock.enqueue({ api, status: 429, headers: { 'retry-after': '120' } })
    const error = await failure(client().stream(request(api)))
    expect(error.code).toBe('model_error')
    expect(error.details).toMatchObject({ kind: 'rate_limit', status: 429, attempts: 1 })
    expect(error.retryAfter).toBe(120)
    expect(error.retryable).toBe(true)
    expect(mock.requests).toHaveLength(1)
  })

  it('exhausts its retries on repeated 500s with kind server', async () => {
    mock.enqueue({ api, status: 500 }, { api, status: 502 }, { api, status: 500 })
    const error = await failure(client({ maxRetries: 2 }).stream(request(api)))
    expect(error.code).toBe('model_error')
    expect(error.details).toMatchObject({ kind: 'server', status: 500, attempts: 3 })
    expect(mock.requests).toHaveLength(3)
  })

  it('does not retry a context overflow (400 context_length_exceeded)', async () => {
    mock.enqueue({
      api,
      status: 400,
      code: 'context_length_exceeded',
      message: "This model's maximum context length is 128000 tokens.",
    })
    const error = await failure(client().stream(request(api)))
    expect(error.details).toMatchObject({
      kind: 'context_overflow',
      status: 400,
      code: 'context_length_exceeded',
    })
    expect(error.retryable).toBe(false)
    expect(mock.requests).toHaveLength(1)
  })

  it('recognizes a context overflow by its message when no code is sent', async () => {
    mock.enqueue({
      api,
      status: 400,
      message: "This model's maximum context length is 4096 tokens. However, you requested 5000.",
    })
    const error = await failure(client().stream(request(api)))
    expect(error.details).toMatchObject({ kind: 'context_overflow', status: 400 })
  })

  it("does not retry a 401, and does not repeat the provider's words about the key", async () => {
    const message = 'Incorrect API key provided: sk-proj-****WXYZ. You can find your API key at …'
    mock.enqueue({ api, status: 401, code: 'invalid_api_key', message })
    const error = await failure(client().stream(request(api)))
    expect(error.details).toMatchObject({ kind: 'auth', status: 401 })
    expect(error.message).toBe(`Model request failed: auth (HTTP 401): ${AUTH_FAILURE_TEXT}`)
    // The operator's copy (server log, telemetry) keeps the provider's words, the key redacted.
    expect(error.logDetails?.provider_message).toContain('Incorrect API key provided: [redacted].')
    expect(JSON.stringify(error.logDetails)).not.toContain('WXYZ')
    expect(mock.requests).toHaveLength(1)
  })

  it("redacts the account a rate limit names from the provider's words", async () => {
    const message = 'Rate limit reached in organization org-SERVERORG123 on requests per min.'
    mock.enqueue({ api, status: 429, code: 'insufficient_quota', message })
    const error = await failure(client().stream(request(api)))
    expect(error.message).toContain('Rate limit reached in organization [redacted] on requests')
    expect(error.message).not.toContain('SERVERORG123')
  })

  it('does not retry an ordinary 400', async () => {
    mock.enqueue({ api, status: 400, code: 'invalid_value', message: 'Bad tool schema' })
    const error = await failure(client().stream(request(api)))
    expect(error.details).toMatchObject({ kind: 'bad_request', status: 400 })
    expect(error.message).toContain('Bad tool schema')
    expect(mock.requests).toHaveLength(1)
  })

  it('does not retry a 429 for exhausted quota', async () => {
    mock.enqueue({ api, status: 429, code: 'insufficient_quota' })
    const error = await failure(client().stream(request(api)))
    expect(error.details).toMatchObject({ kind: 'rate_limit', code: 'insufficient_quota' })
    expect(error.retryable).toBe(false)
    expect(mock.requests).toHaveLength(1)
  })

  it('retries a dropped connection', async () => {
    mock.enqueue({ api, disconnect: true }, { api, text: 'ok' })
    const events = await collect(client().stream(request(api)))
    expect(events.at(-1)).toMatchObject({ type: 'completed', response: { text: 'ok' } })
    expect(mock.requests).toHaveLength(2)
  })

  it('reports kind network once dropped connections exhaust the retries', async () => {
    mock.enqueue({ api, disconnect: true }, { api, disconnect: true })
    const error = await failure(client({ maxRetries: 1 }).stream(request(api)))
    expect(error.details).toMatchObject({ kind: 'network', status: null, attempts: 2 })
  })

  it('retries a stream cut before any event reached the caller', async () => {
    mock.enqueue({ api, text: 'lost', disconnectAfterFrames: 1 }, { api, text: 'ok' })
    const events = await collect(client().stream(request(api)))
    const texts = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []))
    expect(texts).toEqual(['ok'])
    expect(events.at(-1)).toMatchObject({ type: 'completed', response: { text: 'ok' } })
    expect(mock.requests).toHaveLength(2)
  })

  it('fails without retrying a stream cut after events were delivered', async () => {
    mock.enqueue({ api, text: 'a long answer that breaks', chunkSize: 2, disconnectAfterFrames: 6 })
    const seen: ModelStreamEvent[] = []
    let caught: unknown
    try {
      for await (const event of client().stream(request(api))) seen.push(event)
    } catch (error) {
      caught = error
    }
    expect(seen.some((e) => e.type === 'text_delta')).toBe(true)
    expect(seen.some((e) => e.type === 'completed')).toBe(false)
    expect(caught).toMatchObject({ code: 'model_error', details: { kind: 'network' } })
    // Turnline's words, not the runtime's (undici's `terminated`, Deno's, workerd's differ):
    // the message ends in a stored turn.failed event.
    expect((caught as Error).message).toBe(
      'Model request failed: network: the connection failed or broke off before a complete answer arrived',
    )
    expect(mock.requests).toHaveLength(1)
  })

  it('retries a server error reported inside the stream before any event', async () => {
    mock.enqueue(
      { api, text: 'lost', streamError: { code: 'server_error', message: 'overloaded' } },
      { api, text: 'ok' },
    )
    const events = await collect(client().stream(request(api)))
    expect(events.at(-1)).toMatchObject({ type: 'completed', response: { text: 'ok' } })
    expect(mock.requests).toHaveLength(2)
  })

  it('reports a context overflow reported inside the stream, without retrying', async () => {
    const streamError = { code: 'context_length_exceeded', message: 'Input too long' }
    mock.enqueue({ api, text: 'x', streamError })
    const error = await failure(client().stream(request(api)))
    expect(error.details).toMatchObject({ kind: 'context_overflow', status: null })
    expect(error.message).toContain('Input too long')
    expect(mock.requests).toHaveLength(1)
  })

  it('stops mid-stream on abort, with the abort reason and no completed event', async () => {
    mock.enqueue({ api, text: 'x'.repeat(200), chunkSize: 1, frameDelayMs: 10 })
    const controller = new AbortController()
    const seen: ModelStreamEvent[] = []
    let caught: unknown
    try {
      for await (const event of client().stream(request(api, controller.signal))) {
        seen.push(event)
        if (seen.length === 2) controller.abort()
      }
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(DOMException)
    expect((caught as DOMException).name).toBe('AbortError')
    expect(seen.some((e) => e.type === 'completed')).toBe(false)
    expect(seen.length).toBeLessThan(10)
  })

  it('aborts during the backoff wait', async () => {
    mock.enqueue({ api, status: 503, headers: { 'retry-after-ms': '5000' } })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('shutdown')), 100)
    const started = performance.now()
    await expect(collect(client().stream(request(api, controller.signal)))).rejects.toThrow(
      'shutdown',
    )
    expect(performance.now() - started).toBeLessThan(2000)
    expect(mock.requests).toHaveLength(1)
  })

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(collect(client().stream(request(api, controller.signal)))).rejects.toMatchObject({
      name: 'AbortError',
    })
    expect(mock.requests).toHaveLength(0)
  })
})

describe('Responses error event', () => {
  it('maps a bare error event with a request-side code to bad_request, without retrying', async () => {
    const streamError = { code: 'invalid_prompt', message: 'Nope', event: 'error' as const }
    mock.enqueue({ api: 'responses', streamError })
    const error = await failure(client().stream(request('responses')))
    expect(error.details).toMatchObject({ kind: 'bad_request', code: 'invalid_prompt' })
    expect(error.message).toContain('Nope')
    expect(mock.requests).toHaveLength(1)
  })
})

describe('unreachable server', () => {
  it('reports kind network after retrying a refused connection', async () => {
    const gone = await startMockOpenAI()
    const baseURL = gone.baseURL
    await gone.close()
    const error = await failure(client({ baseURL, maxRetries: 1 }).stream(request('chat')))
    expect(error.details).toMatchObject({ kind: 'network', status: null, attempts: 2 })
  })
})

import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import type { ModelStreamEvent } from '../../src/ports/model-client.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

let mock: MockOpenAI
let sdk: OpenAI

beforeAll(async () => {
  mock = await startMockOpenAI()
  sdk = new OpenAI({ apiKey: 'sk-test', baseURL: mock.baseURL, maxRetries: 0 })
})
afterEach(() => {
  mock.reset()
})
afterAll(async () => {
  await mock.close()
})

const post = (path: string, body: unknown) =>
  fetch(`${mock.baseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('mock OpenAI server', () => {
  it('listens on 127.0.0.1', () => {
    expect(mock.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
  })

  it('answers an unscripted request with 500, records it, and fails assertDone', async () => {
    const reply = await post('/chat/completions', { model: 'm', messages: [] })
    expect(reply.status).toBe(500)
    const body = (await reply.json()) as { error: { message: string; code: string } }
    expect(body.error.code).toBe('mock_unexpected_request')
    expect(body.error.message).toContain('script is exhausted')
    expect(mock.requests).toHaveLength(1)
    expect(() => mock.assertDone()).toThrow(/unexpected request #1 to \/v1\/chat\/completions/)
  })

  it('fails assertDone when a request hits the wrong API', async () => {
    mock.enqueue({ api: 'responses', text: 'x' })
    expect((await post('/chat/completions', { model: 'm', messages: [] })).status).toBe(500)
    expect(() => mock.assertDone()).toThrow(/expected the responses API/)
  })

  it('fails assertDone when scripted steps are left over', () => {
    mock.enqueue({ text: 'never asked for' })
    expect(() => mock.assertDone()).toThrow(/1 scripted step\(s\) were never requested/)
  })

  it('fails assertDone on an unknown route', async () => {
    expect((await post('/embeddings', { model: 'm', input: 'x' })).status).toBe(404)
    expect(() => mock.assertDone()).toThrow(/unexpected POST \/v1\/embeddings/)
  })

  it('serves non-streaming Chat Completions the SDK parses', async () => {
    mock.enqueue({
      text: '',
      toolCalls: [{ id: 'call_x', name: 'ls', arguments: '{}' }],
      usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 3 },
    })
    const completion = await sdk.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'list' }],
    })
    const message = completion.choices[0]?.message
    expect(message?.content).toBeNull()
    expect(message?.tool_calls?.[0]).toMatchObject({ id: 'call_x', function: { name: 'ls' } })
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls')
    expect(completion.usage).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 4 },
    })
    expect(mock.requests[0]?.stream).toBe(false)
    mock.assertDone()
  })

  it('serves non-streaming Responses the SDK parses', async () => {
    mock.enqueue({ text: 'hello there', usage: { input_tokens: 8, output_tokens: 2 } })
    const response = await sdk.responses.create({ model: 'gpt-4o', input: 'hi' })
    expect(response.status).toBe('completed')
    expect(response.output_text).toBe('hello there')
    expect(response.usage).toMatchObject({ input_tokens: 8, output_tokens: 2 })
    mock.assertDone()
  })

  it('frames chat SSE as OpenAI does, ending with [DONE]', async () => {
    mock.enqueue({ text: 'hi', usage: { input_tokens: 1, output_tokens: 1 } })
    const reply = await post('/chat/completions', {
      model: 'm',
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(reply.headers.get('content-type')).toContain('text/event-stream')
    const frames = (await reply.text()).split('\n\n').filter((f) => f !== '')
    expect(frames.every((f) => f.startsWith('data: '))).toBe(true)
    expect(frames.at(-1)).toBe('data: [DONE]')
    const usageFrame = JSON.parse(frames.at(-2)?.slice(6) ?? '{}') as Record<string, unknown>
    expect(usageFrame).toMatchObject({ choices: [], usage: { prompt_tokens: 1 } })
    mock.assertDone()
  })

  it('frames Responses SSE with event lines and increasing sequence numbers', async () => {
    mock.enqueue({ text: 'hi' })
    const reply = await post('/responses', { model: 'm', input: 'x', stream: true })
    const frames = (await reply.text()).split('\n\n').filter((f) => f !== '')
    const parsed = frames.map((frame) => {
      const [event, data] = frame.split('\n')
      const payload = JSON.parse(data?.slice(6) ?? '{}') as {
        type: string
        sequence_number: number
      }
      expect(event).toBe(`event: ${payload.type}`)
      return payload
    })
    expect(parsed.map((p) => p.sequence_number)).toEqual(parsed.map((_, i) => i))
    expect(parsed[0]?.type).toBe('response.created')
    expect(parsed.at(-1)?.type).toBe('response.completed')
    mock.assertDone()
  })

  it('computes replies from the request in respond mode, for unlimited turns', async () => {
    mock.respond((request) => {
      const messages = request.body.messages as { content: string }[]
      return { text: `echo: ${messages.at(-1)?.content ?? ''}`, chunkSize: 1000 }
    })
    const client = createOpenAIModelClient({ apiKey: 'sk-test', baseURL: mock.baseURL })
    for (let turn = 0; turn < 25; turn++) {
      const events: ModelStreamEvent[] = []
      for await (const event of client.stream({
        model: 'm',
        api: 'chat',
        messages: [{ role: 'user', content: `turn ${turn}` }],
        tools: [],
      })) {
        events.push(event)
      }
      expect(events.at(-1)).toMatchObject({ response: { text: `echo: turn ${turn}` } })
    }
    expect(mock.requests).toHaveLength(25)
    mock.assertDone()
  })

  it('serves queued steps before the responder', async () => {
    mock.respond(() => ({ text: 'computed' }))
    mock.enqueue({ text: 'scripted' })
    const first = await sdk.chat.completions.create({ model: 'm', messages: [] })
    const second = await sdk.chat.completions.create({ model: 'm', messages: [] })
    expect(first.choices[0]?.message.content).toBe('scripted')
    expect(second.choices[0]?.message.content).toBe('computed')
    mock.assertDone()
  })
})

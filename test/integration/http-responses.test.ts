import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { parseSse } from '../support/sse-frames.ts'

/** `POST /v1/responses` over real HTTP: the real engine, the mock OpenAI server behind it. */
const KEY = 'responses-key-0123456789'
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer

beforeAll(async () => {
  engine = await startEngine()
  const app = createApp({
    api: engine.service,
    auth: { keys: [{ key: KEY, tenant: 'tenant-r' }] },
    log: () => {},
  })
  server = await serveApp(app)
})
afterAll(async () => {
  await server?.close()
  await engine?.close()
})
beforeEach(() => engine.mock.reset())

const ANSWER = 'The answer is forty-two.'
const USAGE = { input_tokens: 50, cached_input_tokens: 20, output_tokens: 7 }

function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

interface Frame {
  type: string
  sequence_number: number
  event_type?: string
  delta?: string
  response?: { id: string; status: string; usage: unknown; output: unknown[] }
}

describe('POST /v1/responses', () => {
  it('streams the bridged events live, dense sequence numbers, ending with [DONE]', async () => {
    engine.mock.enqueue({ text: ANSWER, usage: USAGE })
    const res = await post({ model: 'gpt-4o-mini', input: 'What is the answer?', stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const { frames } = parseSse(await res.text())
    expect(frames.at(-1)).toEqual({ data: '[DONE]' })
    const events = frames.slice(0, -1).map((f) => {
      const event = JSON.parse(f.data) as Frame
      expect(f.event).toBe(event.type)
      return event
    })
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[0]?.type).toBe('response.created')
    expect(events[1]?.type).toBe('response.in_progress')
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []))
    expect(text.join('')).toBe(ANSWER)
    const completed = events.find((e) => e.type === 'response.completed')
    expect(completed?.response?.usage).toEqual({
      input_tokens: 50,
      output_tokens: 7,
      total_tokens: 57,
      input_tokens_details: { cached_tokens: 20 },
    })
    const last = events.at(-1)
    expect(last?.type).toBe('response.custom_event')
    expect(last?.event_type).toBe('vtcode.thread_completed')
    engine.mock.assertDone()
  })

  it('answers a response object without streaming that agrees with the stream', async () => {
    engine.mock.enqueue({ text: ANSWER, usage: USAGE })
    const streamed = parseSse(
      await (
        await post({ input: [{ role: 'user', content: 'Q?' }] }, { accept: 'text/event-stream' })
      ).text(),
    ).frames
    const completed = streamed
      .filter((f) => f.event === 'response.completed')
      .map((f) => (JSON.parse(f.data) as Frame).response)[0]

    engine.mock.enqueue({ text: ANSWER, usage: USAGE })
    const res = await post({
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Q?' }] }],
      instructions: 'Be brief.',
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    const response = (await res.json()) as {
      id: string
      object: string
      status: string
      output: { type: string; content?: { text: string }[] }[]
      usage: unknown
    }
    expect(response.object).toBe('response')
    expect(response.id).toMatch(/^resp_/)
    expect(response.status).toBe('completed')
    const message = response.output.find((item) => item.type === 'message')
    expect(message?.content?.[0]?.text).toBe(ANSWER)
    expect(response.usage).toEqual(completed?.usage)
    expect(response.output).toEqual(completed?.output)
    const instructions = JSON.stringify(engine.mock.requests.at(-1)?.body)
    expect(instructions).toContain('Be brief.')
  })

  it('refuses tools, assistant input and unknown fields as invalid_input; needs the bearer key', async () => {
    const tools = await post({ input: 'x', tools: [{ type: 'function', name: 'f' }] })
    expect(tools.status).toBe(400)
    expect(JSON.stringify(await tools.json())).toContain('tools are not supported')
    const assistant = await post({ input: [{ role: 'assistant', content: 'earlier' }] })
    expect(assistant.status).toBe(400)
    const unknown = await post({ input: 'x', previous_response_id: 'resp_1' })
    expect(unknown.status).toBe(400)
    const anonymous = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'x' }),
    })
    expect(anonymous.status).toBe(401)
    expect(engine.mock.requests).toHaveLength(0)
  })
})

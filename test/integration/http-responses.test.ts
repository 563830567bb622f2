import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { assertConformingStream, responseResourceErrors } from '../support/open-responses-schema.ts'
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
    follow: { pollMs: 50 },
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
      output_tokens_details: { reasoning_tokens: 0 },
    })
    // A default client is sent only what the published schema defines.
    expect(events.at(-1)?.type).toBe('response.completed')
    assertConformingStream(events as unknown as Record<string, unknown>[], { extensions: false })
    engine.mock.assertDone()
  })

  it('sends the vtcode:* events only with Turnline-Extensions: vtcode', async () => {
    engine.mock.enqueue({ text: ANSWER, usage: USAGE })
    const res = await post(
      { input: 'What is the answer?', stream: true },
      { 'turnline-extensions': 'vtcode' },
    )
    const { frames } = parseSse(await res.text())
    const events = frames.slice(0, -1).map((f) => JSON.parse(f.data) as Frame)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events.at(-1)?.type).toBe('vtcode:thread_completed')
    assertConformingStream(events as unknown as Record<string, unknown>[])
    expect(() =>
      assertConformingStream(events as unknown as Record<string, unknown>[], {
        extensions: false,
      }),
    ).toThrow(/vtcode:thread_completed/)
  })

  it('accepts back every default the response echoes', async () => {
    engine.mock.enqueue({ text: ANSWER })
    const first = (await (await post({ input: 'Q?' })).json()) as Record<string, unknown>
    const echoed = [
      'truncation',
      'parallel_tool_calls',
      'text',
      'presence_penalty',
      'frequency_penalty',
      'top_logprobs',
      'service_tier',
      'store',
      'background',
      'tools',
      'tool_choice',
      'temperature',
      'top_p',
      'max_output_tokens',
      'max_tool_calls',
      'instructions',
      'reasoning',
      'safety_identifier',
      'prompt_cache_key',
      'metadata',
      'previous_response_id',
    ]
    const body: Record<string, unknown> = { input: 'Again?', include: [], stream_options: {} }
    for (const field of echoed) body[field] = first[field]
    engine.mock.enqueue({ text: ANSWER })
    const again = await post(body)
    expect(await again.text()).toContain('"status":"completed"')
    expect(again.status).toBe(200)
  })

  it('answers errors in the Open Responses envelope, with the reason the schema gives', async () => {
    const res = await post({ input: 'x', truncation: 'disabled' })
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as { error: Record<string, unknown> }
    expect(error).toMatchObject({ type: 'invalid_request', code: 'invalid_input' })
    expect(error.param).toBe('truncation')
    expect(error.message).toContain('Turnline compacts the context')
    const role = await post({
      input: [
        { role: 'user', content: 'x' },
        { role: 'tool', content: 'y' },
      ],
    })
    const roleError = ((await role.json()) as { error: Record<string, unknown> }).error
    expect(roleError.param).toBe('input[1].role')
    expect(roleError.message).toContain('role must be')
    const missing = await fetch(`${server.url}/v1/responses/resp_no-such-session`, {
      headers: { authorization: `Bearer ${KEY}` },
    })
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as { error: Record<string, unknown> }).error).toMatchObject({
      type: 'not_found',
      code: 'not_found',
      param: '',
    })
    const anonymous = await fetch(`${server.url}/v1/responses`, { method: 'POST' })
    expect(anonymous.status).toBe(401)
    expect(((await anonymous.json()) as { error: Record<string, unknown> }).error).toMatchObject({
      type: 'invalid_request',
      code: 'unauthorized',
    })
    // Other routes keep Turnline's own envelope.
    const other = await fetch(`${server.url}/v1/sessions/nope`, {
      headers: { authorization: `Bearer ${KEY}` },
    })
    expect(((await other.json()) as { error: Record<string, unknown> }).error.type).toBeUndefined()
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
    // The same items, each with its own response's id (ids are unique across responses).
    const session = (id: string) => id.slice('resp_'.length)
    const unscoped = (output: unknown[] | undefined, id: string) =>
      (output as { id: string }[] | undefined)?.map((item) => ({
        ...item,
        id: item.id.replace(`_${session(id)}`, ''),
      }))
    expect(unscoped(response.output, response.id)).toEqual(
      unscoped(completed?.output, String(completed?.id)),
    )
    expect(response.output[0]).not.toMatchObject({
      id: (completed?.output[0] as { id: string } | undefined)?.id,
    })
    const instructions = JSON.stringify(engine.mock.requests.at(-1)?.body)
    expect(instructions).toContain('Be brief.')
  })

  it('refuses hosted tools and unknown fields as invalid_input; needs the bearer key', async () => {
    const tools = await post({ input: 'x', tools: [{ type: 'web_search' }] })
    expect(tools.status).toBe(400)
    expect(JSON.stringify(await tools.json())).toContain('only function tools are supported')
    for (const [body, says] of [
      [{ input: 'x', store: 'no' }, 'store'],
      [
        { input: 'x', background: true },
        'background responses need a server that runs a background worker',
      ],
      [{ input: 'x', reasoning: { effort: 'huge' } }, 'reasoning'],
      [{ input: 'x', model: 'm', temperature: 3 }, 'temperature'],
      [{ input: 'x', metadata: { 'turnline:open_responses': '{}' } }, 'reserved'],
    ] as const) {
      const res = await post(body)
      expect(res.status).toBe(400)
      expect(JSON.stringify(await res.json())).toContain(says)
    }
    engine.mock.enqueue({ text: 'ok' })
    const nulls = await post({
      input: 'x',
      model: null,
      tools: null,
      temperature: null,
      store: true,
    })
    expect(nulls.status).toBe(200)
    engine.mock.reset()
    const assistant = await post({ input: [{ role: 'assistant', content: 'earlier' }] })
    expect(assistant.status).toBe(400)
    expect(JSON.stringify(await assistant.json())).toContain('input must end with a user message')
    const unknown = await post({ input: 'x', previous_response_id: 'resp_1' })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe(
      'previous_response_id',
    )
    const anonymous = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'x' }),
    })
    expect(anonymous.status).toBe(401)
    expect(engine.mock.requests).toHaveLength(0)
  })

  it('GET /v1/responses/:id rebuilds the response, and its stream from starting_after', async () => {
    engine.mock.enqueue({ text: ANSWER, reasoning: 'Think first.', usage: USAGE })
    const live = parseSse(
      await (
        await post({ model: 'gpt-4o-mini', input: 'Q?', stream: true, metadata: { ticket: 'T-7' } })
      ).text(),
    ).frames
    const liveEvents = live.slice(0, -1).map((f) => JSON.parse(f.data) as Record<string, unknown>)
    const completed = liveEvents.find((e) => e.type === 'response.completed')?.response as {
      id: string
      completed_at: number
    }
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/responses/${path}`, {
        headers: { authorization: `Bearer ${KEY}`, ...headers },
      })

    const res = await get(completed.id)
    expect(res.status).toBe(200)
    const read = (await res.json()) as typeof completed & Record<string, unknown>
    expect(responseResourceErrors(read)).toEqual([])
    expect(Math.abs(read.completed_at - completed.completed_at)).toBeLessThanOrEqual(1)
    expect({ ...read, completed_at: 0 }).toEqual({ ...completed, completed_at: 0 })
    expect(read.metadata).toEqual({ ticket: 'T-7' })

    const resumed = parseSse(
      await (await get(`${completed.id}?stream=true&starting_after=5`)).text(),
    ).frames
    expect(resumed.at(-1)).toEqual({ data: '[DONE]' })
    const strip = (e: Record<string, unknown>) =>
      e.type === 'response.completed'
        ? { ...e, response: { ...(e.response as object), completed_at: 0 } }
        : e
    const resumedEvents = resumed.slice(0, -1).map((f) => strip(JSON.parse(f.data)))
    expect(resumedEvents).toEqual(liveEvents.slice(6).map(strip))
    const all = parseSse(
      await (await get(completed.id, { accept: 'text/event-stream' })).text(),
    ).frames
    expect(all).toHaveLength(live.length)

    expect((await get('resp_no-such-session')).status).toBe(404)
    expect((await get('not-a-response-id')).status).toBe(400)
    expect((await get(`${completed.id}?starting_after=x`)).status).toBe(400)
    const plain = await engine.service.createSession('tenant-r', {})
    expect((await get(`resp_${plain.session_id}`)).status).toBe(404)
  })

  it('GET … ?stream=true follows a response that still runs and ends with [DONE] when it completes', async () => {
    const record = JSON.stringify({
      v: 1,
      created_at: 1_787_000_000,
      model: 'm',
      max_tool_calls: null,
    })
    const { session_id } = await engine.service.createSession('tenant-r', {
      metadata: { 'turnline:open_responses': record },
    })
    const res = await fetch(`${server.url}/v1/responses/resp_${session_id}?stream=true`, {
      headers: { authorization: `Bearer ${KEY}` },
    })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes('response.in_progress')) {
      const next = await reader.read()
      if (next.done) throw new Error(`stream ended early: ${text}`)
      text += decoder.decode(next.value, { stream: true })
    }
    engine.mock.enqueue({ text: 'A late answer.' })
    await engine.service.stepTurn('tenant-r', session_id, { input: 'Q?' })
    await engine.service.complete('tenant-r', session_id)
    for (;;) {
      const next = await reader.read()
      if (next.done) break
      text += decoder.decode(next.value, { stream: true })
    }
    const { frames } = parseSse(text)
    expect(frames.at(-1)).toEqual({ data: '[DONE]' })
    const events = frames.slice(0, -1).map((f) => JSON.parse(f.data) as Record<string, unknown>)
    assertConformingStream(events)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []))
    expect(deltas.join('')).toBe('A late answer.')
    expect(events[0]?.response).toMatchObject({ created_at: 1_787_000_000 })
  })
})

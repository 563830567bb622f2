import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { assertConformingStream } from '../support/open-responses-schema.ts'
import {
  type ResponseJson,
  type ResponsesApp,
  startResponsesApp,
  WEATHER_TOOL,
} from '../support/responses-app.ts'
import { parseSse } from '../support/sse-frames.ts'

/**
 * Request options of `/v1/responses`, from the specification. `tool_choice` and
 * `parallel_tool_calls`: every choice it defines is accepted, reaches the model request (here the
 * Chat Completions API of the mock OpenAI server, which refuses what OpenAI refuses) and is
 * echoed; a choice naming a function the request does not define is a 400 naming `tool_choice`.
 * `store: false`: the response is answered whole and nothing of it can be read back or continued.
 * An Idempotency-Key: a retry of the same body answers the same response without a model
 * request; the key with another body is 422 `idempotency_key_reused`, whichever part differs
 * (the input, or the settings the response runs with).
 */
let app: ResponsesApp

beforeAll(async () => {
  app = await startResponsesApp('responses-choice-key-0123456789', 'tenant-c')
})
afterAll(async () => {
  await app?.close()
})
beforeEach(() => app.engine.mock.reset())

const WEATHER = WEATHER_TOOL
const TIME = { type: 'function', name: 'get_time', parameters: { type: 'object' } }
const CALL = { id: 'call_w1', name: 'get_weather', arguments: '{"location":"San Francisco"}' }

type Json = Record<string, unknown>
const post = (body: unknown) => app.post(body)
const create = (body: unknown) => app.create(body)

/** The body of the model request the mock received last. */
const sent = () => app.engine.mock.requests.at(-1)?.body ?? {}

describe('tool_choice', () => {
  it('a named function is forced, echoed, and its output continues the loop (function-call round trip)', async () => {
    app.engine.mock.enqueue({ toolCalls: [CALL] })
    const choice = { type: 'function', name: 'get_weather' }
    const first = await create({
      input: 'Use the weather tool to get the temperature in San Francisco.',
      tools: [WEATHER, TIME],
      tool_choice: choice,
    })
    expect(sent().tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } })
    expect(first.tool_choice).toEqual(choice)
    expect(first.output).toMatchObject([{ type: 'function_call', call_id: 'call_w1' }])

    app.engine.mock.enqueue({ text: 'It is 64 degrees and clear.' })
    const second = await create({
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_w1', output: '64 degrees and clear' }],
    })
    expect(second.status).toBe('completed')
    expect(second.tool_choice).toBe('auto')
    expect(sent()).not.toHaveProperty('tool_choice')
    expect(second.output.at(-1)).toMatchObject({ type: 'message', role: 'assistant' })
    app.engine.mock.assertDone()
  })

  it.each([
    ['none', 'none'],
    ['required', 'required'],
  ])('%s reaches the model and is echoed', async (choice, wire) => {
    app.engine.mock.enqueue(choice === 'none' ? { text: 'No tools.' } : { toolCalls: [CALL] })
    const response = await create({ input: 'Weather?', tools: [WEATHER], tool_choice: choice })
    expect(sent().tool_choice).toBe(wire)
    expect(response.tool_choice).toBe(choice)
    app.engine.mock.assertDone()
  })

  it('allowed_tools offers the model only the listed functions', async () => {
    app.engine.mock.enqueue({ text: 'It is noon.' })
    const choice = {
      type: 'allowed_tools',
      mode: 'auto',
      tools: [{ type: 'function', name: 'get_time' }],
    }
    const response = await create({
      input: 'What time is it?',
      tools: [WEATHER, TIME],
      tool_choice: choice,
    })
    const offered = (sent().tools as { function: { name: string } }[]).map((t) => t.function.name)
    expect(offered).toContain('get_time')
    expect(offered).not.toContain('get_weather')
    expect(sent()).not.toHaveProperty('tool_choice')
    expect(response.tool_choice).toEqual(choice)
  })

  it('a function not among the tools, or a shape that is no choice, is a 400 naming tool_choice', async () => {
    for (const choice of [
      { type: 'function', name: 'get_time' },
      { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'nope' }] },
      'sometimes',
    ]) {
      const res = await post({ input: 'Hi', tools: [WEATHER], tool_choice: choice })
      expect(res.status).toBe(400)
      const { error } = (await res.json()) as { error: Json }
      expect(error).toMatchObject({ type: 'invalid_request', param: 'tool_choice' })
      expect(String(error.message)).toMatch(/tool_choice/)
    }
    expect(app.engine.mock.requests).toHaveLength(0)
  })
})

describe('parallel_tool_calls', () => {
  it('false reaches the model with the tools and is echoed, streamed as it is sent', async () => {
    app.engine.mock.enqueue({ toolCalls: [CALL] })
    const res = await post({
      input: 'Weather?',
      tools: [WEATHER],
      parallel_tool_calls: false,
      stream: true,
    })
    expect(res.status).toBe(200)
    const frames = parseSse(await res.text()).frames.slice(0, -1)
    const events = frames.map((f) => JSON.parse(f.data) as Json)
    assertConformingStream(events, { extensions: false })
    expect(sent().parallel_tool_calls).toBe(false)
    const created = events[0] as { response: ResponseJson }
    const last = events.at(-1) as { type: string; response: ResponseJson }
    expect(created.response.parallel_tool_calls).toBe(false)
    expect(last.response.parallel_tool_calls).toBe(false)
    const read = (await (
      await fetch(`${app.server.url}/v1/responses/${last.response.id}`, { headers: app.auth })
    ).json()) as ResponseJson
    expect(read.parallel_tool_calls).toBe(false)
  })

  it('true (the default) sends nothing', async () => {
    app.engine.mock.enqueue({ text: 'Fine.' })
    const response = await create({ input: 'Hi', tools: [WEATHER], parallel_tool_calls: true })
    expect(sent()).not.toHaveProperty('parallel_tool_calls')
    expect(response.parallel_tool_calls).toBe(true)
  })
})

describe('store: false', () => {
  it('answers the response (store: false echoed), then keeps nothing: GET and previous_response_id are 404', async () => {
    app.engine.mock.enqueue({ text: 'Not kept.' })
    const response = await create({ input: 'Forget me.', store: false })
    expect(response.store).toBe(false)
    expect(response.output.at(-1)).toMatchObject({ type: 'message' })
    const url = `${app.server.url}/v1/responses/${response.id}`
    expect((await fetch(url, { headers: app.auth })).status).toBe(404)
    const next = await post({ previous_response_id: response.id, input: 'and?' })
    expect(next.status).toBe(404)
    expect(((await next.json()) as { error: Json }).error.param).toBe('previous_response_id')
  })

  it('streamed, and waiting on a function call: the stream is whole, nothing is kept', async () => {
    app.engine.mock.enqueue({ toolCalls: [CALL] })
    const res = await post({ input: 'Weather?', tools: [WEATHER], store: false, stream: true })
    const frames = parseSse(await res.text()).frames
    expect(frames.at(-1)).toEqual({ data: '[DONE]' })
    const events = frames.slice(0, -1).map((f) => JSON.parse(f.data) as Json)
    assertConformingStream(events, { extensions: false })
    const last = events.at(-1) as { type: string; response: ResponseJson }
    expect(last.type).toBe('response.completed')
    expect(last.response).toMatchObject({ store: false, output: [{ type: 'function_call' }] })
    const url = `${app.server.url}/v1/responses/${last.response.id}`
    expect((await fetch(url, { headers: app.auth })).status).toBe(404)
  })

  it('with an Idempotency-Key is a 400: nothing would be kept to answer a retry with', async () => {
    const res = await app.post(
      { input: 'Once?', store: false },
      { 'idempotency-key': `store-false-${Date.now()}` },
    )
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as { error: Json }
    expect(error).toMatchObject({ type: 'invalid_request', param: 'header.idempotency-key' })
    expect(app.engine.mock.requests).toHaveLength(0)
  })
})

const BODY = { model: 'gpt-4o-mini', input: 'hi', instructions: 'be A' }
let n = 0
const newKey = () => `resp-idem-${Date.now()}-${n++}`

describe('Idempotency-Key on POST /v1/responses', () => {
  it('the same body again: the same response, no second model request (streamed or not)', async () => {
    const key = newKey()
    app.engine.mock.enqueue({ text: 'Hello.' })
    const first = await app.create(BODY, { 'idempotency-key': key })
    const again = await app.create(BODY, { 'idempotency-key': key })
    expect(again.id).toBe(first.id)
    expect(again.output).toEqual(first.output)
    const streamed = await app.post({ ...BODY, stream: true }, { 'idempotency-key': key })
    expect(streamed.status).toBe(200)
    expect(await streamed.text()).toContain(first.id)
    expect(app.engine.mock.requests).toHaveLength(1)
  })

  it.each([
    ['instructions', { instructions: 'be B' }],
    ['tools', { tools: [WEATHER] }],
    ['model', { model: 'gpt-4o' }],
    ['text', { text: { format: { type: 'json_schema', name: 'a', schema: { type: 'object' } } } }],
    ['max_tool_calls', { max_tool_calls: 3 }],
    ['metadata', { metadata: { run: '2' } }],
    ['input', { input: 'hello' }],
  ])('the key with another %s is 422, and runs nothing', async (_field, change) => {
    const key = newKey()
    app.engine.mock.enqueue({ text: 'Hello.' })
    await app.create(BODY, { 'idempotency-key': key })
    const reused = await app.post({ ...BODY, ...change }, { 'idempotency-key': key })
    expect(reused.status).toBe(422)
    expect(await reused.json()).toMatchObject({
      error: { code: 'idempotency_key_reused', param: 'header.idempotency-key' },
    })
    expect(app.engine.mock.requests).toHaveLength(1)
  })
})

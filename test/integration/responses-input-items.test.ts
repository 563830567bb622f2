import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { itemErrors, responseResourceErrors } from '../support/open-responses-schema.ts'
import { WEATHER_TOOL } from '../support/responses-app.ts'

/**
 * `GET /v1/responses/{id}/input_items` (the specification's list operation): the items a
 * response was given, as a `list` page (`data`, `first_id`, `last_id`, `has_more`) paged with
 * `limit`, `order`, `after` and `before`; each item an Open Responses item of the published
 * schema. Tenant-scoped; a deleted response and a `store: false` one are 404.
 */
const KEY_A = 'input-items-key-a-0123456789'
const KEY_B = 'input-items-key-b-0123456789'
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer

beforeAll(async () => {
  engine = await startEngine()
  const keys = [
    { key: KEY_A, tenant: 'tenant-a' },
    { key: KEY_B, tenant: 'tenant-b' },
  ]
  server = await serveApp(createApp({ api: engine.service, auth: { keys }, log: () => {} }))
})
afterAll(async () => {
  await server?.close()
  await engine?.close()
})
beforeEach(() => engine.mock.reset())

type Json = Record<string, unknown>
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

async function call(method: string, path: string, body?: unknown, key = KEY_A) {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

async function create(body: Json): Promise<Json & { id: string }> {
  const { status, body: response } = await call('POST', '/responses', body)
  expect(status, JSON.stringify(response)).toBe(200)
  expect(responseResourceErrors(response, false)).toEqual([])
  return response as Json & { id: string }
}

const list = (id: string, query = '', key = KEY_A) =>
  call('GET', `/responses/${id}/input_items${query}`, undefined, key)

/** Each listed item is an item of the published schema (`ItemField`). */
function expectItems(items: Json[]) {
  for (const item of items) expect(itemErrors(item)).toEqual([])
}

describe('input_items', () => {
  it('lists the conversation a response was given, last first by default, each item of the schema', async () => {
    engine.mock.enqueue({ text: 'Your name is Alice.' })
    const response = await create({
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'system', content: 'You are a pirate.' },
        { role: 'user', content: 'My name is Alice.' },
        { type: 'message', role: 'assistant', content: 'Hello Alice!' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is my name?' },
            { type: 'input_image', image_url: PNG, detail: 'low' },
          ],
        },
      ],
    })
    const { status, body } = await list(response.id)
    expect(status).toBe(200)
    const data = body.data as Json[]
    expectItems(data)
    expect(body).toMatchObject({ object: 'list', has_more: false })
    expect(data.map((item) => item.role)).toEqual(['user', 'assistant', 'user'])
    expect(data[0]).toMatchObject({
      type: 'message',
      status: 'completed',
      content: [
        { type: 'input_text', text: 'What is my name?' },
        { type: 'input_image', image_url: PNG, detail: 'low' },
      ],
    })
    expect(data[1]).toMatchObject({
      content: [{ type: 'output_text', text: 'Hello Alice!', annotations: [] }],
    })
    expect(body.first_id).toBe(data[0]?.id)
    expect(body.last_id).toBe(data[2]?.id)
    expect(new Set(data.map((item) => item.id)).size).toBe(3)
  })

  it('pages with limit, order, after and before', async () => {
    engine.mock.enqueue({ text: 'Three.' })
    const response = await create({
      input: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    })
    const texts = (body: Json) =>
      (body.data as { content: { text: string }[] }[]).map((item) => item.content[0]?.text)
    const first = (await list(response.id, '?order=asc&limit=2')).body
    expect(texts(first)).toEqual(['one', 'two'])
    expect(first.has_more).toBe(true)
    const second = (await list(response.id, `?order=asc&limit=2&after=${first.last_id}`)).body
    expect(texts(second)).toEqual(['three'])
    expect(second.has_more).toBe(false)
    const desc = (await list(response.id, '?limit=1')).body
    expect(texts(desc)).toEqual(['three'])
    const before = (await list(response.id, `?order=asc&before=${second.first_id}`)).body
    expect(texts(before)).toEqual(['one', 'two'])
    expect((await list(response.id, '?limit=0')).body).toMatchObject({
      data: [],
      first_id: null,
      has_more: true,
    })
    const unknown = await list(response.id, `?after=msg_9_${response.id.slice(5)}`)
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toMatchObject({ type: 'invalid_request', param: 'query.after' })
    expect((await list(response.id, '?limit=101')).status).toBe(400)
  })

  it('lists a tool loop: the earlier conversation (previous_response_id), calls and outputs', async () => {
    engine.mock.enqueue({
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }],
    })
    const first = await create({ input: 'Weather in Paris?', tools: [WEATHER_TOOL] })
    engine.mock.enqueue({ text: 'It is sunny.' })
    const second = await create({
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    })
    const data = (await list(second.id, '?order=asc')).body.data as Json[]
    expectItems(data)
    expect(data).toMatchObject([
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'Weather in Paris?' }],
      },
      {
        type: 'function_call',
        call_id: 'call_1',
        name: 'get_weather',
        arguments: '{"location":"Paris"}',
      },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ])
  })

  it("is 404 for another tenant's response, a deleted one and a store: false one", async () => {
    engine.mock.enqueue({ text: 'A.' })
    const kept = await create({ input: 'Hello.' })
    const other = await list(kept.id, '', KEY_B)
    expect(other.status).toBe(404)
    expect(other.body.error).toMatchObject({ type: 'not_found' })

    expect((await call('DELETE', `/responses/${kept.id}`)).status).toBe(200)
    expect((await list(kept.id)).status).toBe(404)

    engine.mock.enqueue({ text: 'B.' })
    const unstored = await create({ input: 'Hello.', store: false })
    expect((await list(unstored.id)).status).toBe(404)
    expect((await list('resp_no-such-response')).status).toBe(404)
  })
})

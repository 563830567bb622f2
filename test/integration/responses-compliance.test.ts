import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockOpenAI, type MockRequest, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { assertConformingStream, responseResourceErrors } from '../support/open-responses-schema.ts'
import { WEATHER_TOOL } from '../support/responses-app.ts'
import { parseSse } from '../support/sse-frames.ts'

/**
 * The scenarios of the Open Responses compliance suite (`openresponses/openresponses`, its
 * server tests as published with specification 2026-04-24), written here from their
 * descriptions, against `npm start` over plain HTTP as the suite sends them (no client library,
 * no Turnline header), the mock OpenAI API as the model. Each answer must be a response resource
 * of the published schema, and pass the scenario's checks: output present, status `completed`,
 * the expected item types, a stream whose every event conforms. The model answers by what it is
 * sent: a call of `get_weather` when offered it after a user message, else text.
 */
const KEY = 'responses-compliance-key-0123456789'
let dir: string
let mock: MockOpenAI
let server: NodeEntry
let base: string

type Json = Record<string, unknown>
interface ResponseJson extends Json {
  id: string
  status: string
  output: Json[]
}

function modelTurn(request: MockRequest) {
  const messages = (request.body.messages ?? []) as Json[]
  const tools = (request.body.tools ?? []) as { function: { name: string } }[]
  const last = messages.at(-1)
  if (last?.role === 'user' && tools.some((t) => t.function.name === 'get_weather')) {
    return {
      toolCalls: [{ name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' }],
    }
  }
  return { text: last?.role === 'tool' ? 'It is 64 degrees and clear.' : 'Hello there, friend.' }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-responses-compliance-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  mock.respond(modelTurn)
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=compliance`,
    OPENAI_API_KEY: 'sk-compliance',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_LOG: 'off',
  })
  base = `${await server.listening()}/v1`
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function send(body: Json, streaming = false): Promise<Response> {
  return fetch(`${base}/responses`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ ...body, stream: streaming }),
  })
}

/** The response resource of a plain request, checked against the published schema. */
async function respond(body: Json): Promise<ResponseJson> {
  const res = await send(body)
  const text = await res.text()
  expect(res.status, text).toBe(200)
  const response = JSON.parse(text) as ResponseJson
  expect(responseResourceErrors(response, false)).toEqual([])
  return response
}

/** The events of a streamed request (each conforming) and the response its last one carries. */
async function streamed(body: Json): Promise<{ events: Json[]; response: ResponseJson }> {
  const res = await send(body, true)
  expect(res.status).toBe(200)
  const { frames } = parseSse(await res.text())
  expect(frames.at(-1)).toEqual({ data: '[DONE]' })
  const events = frames.slice(0, -1).map((f) => JSON.parse(f.data) as Json)
  expect(events.length).toBeGreaterThan(0)
  assertConformingStream(events, { extensions: false })
  const response = events.at(-1)?.response as ResponseJson
  expect(responseResourceErrors(response, false)).toEqual([])
  return { events, response }
}

const completedWithOutput = (response: ResponseJson) => {
  expect(response.output.length).toBeGreaterThan(0)
  expect(response.status).toBe('completed')
}
const user = (content: unknown) => ({ type: 'message', role: 'user', content })
const MODEL = 'gpt-4o-mini'

describe('the compliance suite scenarios against npm start', () => {
  it('basic-response', async () => {
    completedWithOutput(
      await respond({ model: MODEL, input: [user('Say hello in exactly 3 words.')] }),
    )
  })

  it('streaming-response', async () => {
    const { response } = await streamed({ model: MODEL, input: [user('Count from 1 to 5.')] })
    expect(response.status).toBe('completed')
  })

  it('system-prompt', async () => {
    const input = [
      {
        type: 'message',
        role: 'system',
        content: 'You are a pirate. Always respond in pirate speak.',
      },
      user('Say hello.'),
    ]
    completedWithOutput(await respond({ model: MODEL, input }))
  })

  it('tool-calling', async () => {
    const response = await respond({
      model: MODEL,
      input: [user("What's the weather like in San Francisco?")],
      tools: [WEATHER_TOOL],
    })
    expect(response.output.some((item) => item.type === 'function_call')).toBe(true)
  })

  it('tool-calling-streaming', async () => {
    const { events } = await streamed({
      model: MODEL,
      input: [user("What's the weather like in San Francisco?")],
      tools: [WEATHER_TOOL],
    })
    const item = (e: Json) => (e.item as Json | undefined)?.type
    const types = events.map((e) => e.type)
    expect(
      events.some((e) => e.type === 'response.output_item.added' && item(e) === 'function_call'),
    ).toBe(true)
    expect(types).toContain('response.function_call_arguments.delta')
    expect(types).toContain('response.function_call_arguments.done')
    expect(
      events.some((e) => e.type === 'response.output_item.done' && item(e) === 'function_call'),
    ).toBe(true)
  })

  it('function-call-roundtrip', async () => {
    const first = await respond({
      model: MODEL,
      input: 'Use the weather tool to get the temperature in San Francisco.',
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', name: 'get_weather' },
    })
    const call = first.output.find((item) => item.type === 'function_call')
    expect(call?.call_id).toEqual(expect.any(String))
    const second = await respond({
      model: MODEL,
      previous_response_id: first.id,
      input: [
        { type: 'function_call_output', call_id: call?.call_id, output: '64 degrees and clear' },
      ],
    })
    completedWithOutput(second)
  })

  it('image-input', async () => {
    const image =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
    const input = [
      user([
        { type: 'input_text', text: 'What do you see in this image? Answer in one sentence.' },
        { type: 'input_image', image_url: image },
      ]),
    ]
    completedWithOutput(await respond({ model: MODEL, input }))
  })

  it('file-input', async () => {
    // A small PDF as base64 file_data with its filename, as the suite sends it.
    const pdf = Buffer.from(
      '%PDF-1.1\n1 0 obj << /Type /Catalog >> endobj\n(Title: Compliance File Input Fixture)\n%%EOF',
    ).toString('base64')
    const input = [
      user([
        { type: 'input_text', text: 'Read the attached file and answer with its title only.' },
        {
          type: 'input_file',
          filename: 'compliance-fixture.pdf',
          file_data: `data:application/pdf;base64,${pdf}`,
        },
      ]),
    ]
    completedWithOutput(await respond({ model: MODEL, input }))
    const sent = mock.requests.at(-1)?.body.messages as Json[]
    expect(sent).toContainEqual({
      role: 'user',
      content: [
        {
          type: 'file',
          file: {
            filename: 'compliance-fixture.pdf',
            file_data: `data:application/pdf;base64,${pdf}`,
          },
        },
      ],
    })
  })

  it('multi-turn', async () => {
    const input = [
      user('My name is Alice.'),
      {
        type: 'message',
        role: 'assistant',
        content: 'Hello Alice! Nice to meet you. How can I help you today?',
      },
      user('What is my name?'),
    ]
    completedWithOutput(await respond({ model: MODEL, input }))
  })

  it('previous-response-id', async () => {
    const first = await respond({
      model: MODEL,
      input: 'Remember this code word: papaya. Reply with only OK.',
    })
    const second = await respond({
      model: MODEL,
      previous_response_id: first.id,
      input: 'What code word did I ask you to remember?',
    })
    completedWithOutput(second)
    const sent = JSON.stringify(mock.requests.at(-1)?.body.messages)
    expect(sent).toContain('papaya')
  })
})

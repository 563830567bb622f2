import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import {
  assertConformingStream,
  responseResourceErrors,
  socketErrorEventErrors,
} from '../support/open-responses-schema.ts'
import { WEATHER_TOOL, weatherModel } from '../support/responses-app.ts'
import {
  openResponsesSocket,
  refusedUpgrade,
  type SocketTurn,
  socketUrl,
} from '../support/responses-socket-client.ts'

/**
 * The Open Responses WebSocket mode on `npm start` (the Node entry, the `ws` server), with a
 * real WebSocket client and the mock OpenAI API as the model: the events of each response as the
 * HTTP stream has them, several responses on one connection, a client tool's round trip, the
 * `store: false` chain the connection keeps, errors as events, exactly once with
 * `idempotency_key`, and the tenancy of HTTP (the key on the upgrade, tenants apart).
 */
const KEY = 'responses-socket-key-0123456789ab'
const OTHER = 'responses-socket-other-0123456789'
const entry = useEntryWithMock('responses-socket', {
  TURNLINE_API_KEYS: `${KEY}=alpha,${OTHER}=beta`,
  TURNLINE_LOG: 'off',
})
let mock: MockOpenAI
let url: string
const auth = (key = KEY) => ({ Authorization: `Bearer ${key}` })

type Json = Record<string, unknown>

beforeAll(() => {
  mock = entry.mock
  url = socketUrl(entry.url)
})

beforeEach(() => {
  mock.reset()
  mock.respond(
    weatherModel(
      'Paris',
      (messages) => `You said: ${JSON.stringify(messages.at(-1)?.content ?? null).slice(0, 200)}`,
    ),
  )
})

/** A completed response whose every event conforms, numbered densely from 0. */
function completed(turn: SocketTurn): NonNullable<SocketTurn['response']> {
  expect(turn.last.type, JSON.stringify(turn.last)).toBe('response.completed')
  assertConformingStream(turn.events, { extensions: false })
  expect(turn.events.map((e) => e.sequence_number)).toEqual(turn.events.map((_, i) => i))
  const response = turn.response
  if (!response) throw new Error('no response')
  expect(responseResourceErrors(response, false)).toEqual([])
  return response
}

const textOf = (response: Json & { output: Json[] }) =>
  response.output
    .flatMap((item) => (item.content ?? []) as Json[])
    .map((part) => String(part.text ?? ''))
    .join('')

describe('the WebSocket mode of /v1/responses on npm start', () => {
  it('streams a response as the HTTP stream does, and several in order on one connection', async () => {
    const socket = await openResponsesSocket(url, auth())
    socket.send({ type: 'response.create', model: 'gpt-4o-mini', input: 'first' })
    socket.send({ type: 'response.create', model: 'gpt-4o-mini', input: 'second' })
    const first = await socket.turn()
    const second = await socket.turn()
    const types = first.events.map((e) => e.type)
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress'])
    expect(types).toContain('response.output_text.delta')
    expect(textOf(completed(first))).toBe('You said: "first"')
    expect(textOf(completed(second))).toBe('You said: "second"')
    expect(first.response?.id).not.toBe(second.response?.id)
    socket.close()
    expect((await socket.closed).code).toBe(1000)
  })

  it('runs a client tool round trip on a store: false chain kept by the connection', async () => {
    const socket = await openResponsesSocket(url, auth())
    socket.send({
      type: 'response.create',
      store: false,
      tools: [WEATHER_TOOL],
      input: 'Weather in Paris?',
    })
    const asked = completed(await socket.turn())
    const call = asked.output.find((item) => item.type === 'function_call')
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"location":"Paris"}' })
    socket.send({
      type: 'response.create',
      store: false,
      tools: [WEATHER_TOOL],
      previous_response_id: asked.id,
      input: [{ type: 'function_call_output', call_id: call?.call_id, output: 'sunny, 21 C' }],
    })
    const answered = completed(await socket.turn())
    expect(answered.previous_response_id).toBe(asked.id)
    expect(textOf(answered)).toBe('The tool said: sunny, 21 C')
    // The model read the whole chain: the question, its call, the output.
    const messages = mock.requests.at(-1)?.body.messages as Json[]
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    socket.close()

    // Nothing of a store: false response outlives its connection.
    const later = await openResponsesSocket(url, auth())
    later.send({
      type: 'response.create',
      store: false,
      previous_response_id: answered.id,
      input: 'x',
    })
    const missing = await later.turn()
    expect(
      socketErrorEventErrors(missing.last),
      JSON.stringify(missing.events).slice(0, 1500),
    ).toEqual([])
    expect(missing.last).toMatchObject({
      status: 404,
      error: { code: 'previous_response_not_found', param: 'previous_response_id' },
    })
    later.close()
  })

  it('continues a stored response with previous_response_id, within the tenant only', async () => {
    const socket = await openResponsesSocket(url, auth())
    socket.send({ type: 'response.create', input: 'remember cobalt' })
    const first = completed(await socket.turn())
    socket.send({ type: 'response.create', previous_response_id: first.id, input: 'word?' })
    completed(await socket.turn())
    const roles = ((mock.requests.at(-1)?.body.messages ?? []) as Json[]).map((m) => m.role)
    expect(roles).toEqual(['user', 'assistant', 'user'])
    socket.close()

    const stranger = await openResponsesSocket(url, auth(OTHER))
    stranger.send({ type: 'response.create', previous_response_id: first.id, input: 'word?' })
    expect((await stranger.turn()).last).toMatchObject({
      type: 'error',
      error: { code: 'previous_response_not_found' },
    })
    stranger.close()
  })

  it('answers a bad event with an error event and keeps the connection', async () => {
    const socket = await openResponsesSocket(url, auth())
    const bad: [string, string][] = [
      ['not json', ''],
      [JSON.stringify({ type: 'response.cancel' }), 'type'],
      [JSON.stringify({ type: 'response.create', input: 'x', stream: true }), 'stream'],
      [JSON.stringify({ type: 'response.create', input: 'x', background: false }), 'background'],
      [JSON.stringify({ type: 'response.create', input: 'x', temperature: 9 }), 'temperature'],
      [
        JSON.stringify({ type: 'response.create', input: 'x', idempotency_key: 'a b' }),
        'idempotency_key',
      ],
      [
        JSON.stringify({ type: 'response.create', input: 'x', store: false, idempotency_key: 'k' }),
        'idempotency_key',
      ],
    ]
    for (const [text, param] of bad) {
      socket.sendText(text)
      const { last } = await socket.turn()
      expect(socketErrorEventErrors(last), text).toEqual([])
      expect(last, text).toMatchObject({
        type: 'error',
        status: 400,
        error: { type: 'invalid_request', code: 'invalid_input', param },
      })
    }
    socket.send({ type: 'response.create', input: 'still here' })
    expect(textOf(completed(await socket.turn()))).toBe('You said: "still here"')
    expect(mock.requests).toHaveLength(1)
    socket.close()
  })

  it('runs a response.create with an idempotency_key once, however often it is sent', async () => {
    const key = `socket-once-${Date.now()}`
    const socket = await openResponsesSocket(url, auth())
    const create = { type: 'response.create', input: 'only once', idempotency_key: key }
    socket.send(create)
    socket.send(create)
    const first = completed(await socket.turn())
    const again = completed(await socket.turn())
    socket.close()
    const other = await openResponsesSocket(url, auth())
    other.send(create)
    const third = completed(await other.turn())
    other.close()
    expect(again.id).toBe(first.id)
    expect(third.id).toBe(first.id)
    expect(textOf(third)).toBe(textOf(first))
    expect(mock.requests).toHaveLength(1)
  })

  it('refuses an upgrade without a valid key, as HTTP refuses the request', async () => {
    const none = await refusedUpgrade(url.replace(/^ws/, 'http'))
    expect(none.status).toBe(401)
    expect(JSON.parse(none.body)).toMatchObject({
      error: { type: 'invalid_request', code: 'unauthorized' },
    })
    const wrong = await refusedUpgrade(url.replace(/^ws/, 'http'), auth('not-a-key-of-this-server'))
    expect(wrong.status).toBe(401)
    await expect(openResponsesSocket(url)).rejects.toThrow(/cannot open/)
    const plain = await fetch(url.replace(/^ws/, 'http'), { headers: auth() })
    expect(plain.status).toBe(426)
    // Handshakes the WebSocket server refuses release what the route reserved for them: more of
    // them than a tenant may hold sockets, then a socket still opens.
    for (let i = 0; i < 40; i++) {
      const bad = await refusedUpgrade(url.replace(/^ws/, 'http'), {
        ...auth(),
        'sec-websocket-key': 'not-a-key',
      })
      expect(bad.status).toBe(400)
    }
    const socket = await openResponsesSocket(url, auth())
    socket.close()
    expect(mock.requests).toHaveLength(0)
  })
})

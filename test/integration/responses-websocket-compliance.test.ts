import { beforeAll, describe, expect, it } from 'vitest'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import type { MockRequest } from '../support/mock-openai.ts'
import {
  assertConformingStream,
  responseResourceErrors,
  socketErrorEventErrors,
} from '../support/open-responses-schema.ts'
import {
  openResponsesSocket,
  type ResponsesSocketClient,
  type SocketTurn,
  socketUrl,
} from '../support/responses-socket-client.ts'

/**
 * The WebSocket scenarios of the Open Responses compliance suite (`openresponses/openresponses`,
 * its `websocket-*` tests as published with specification 2026-04-24), written here from their
 * descriptions, against `npm start` as the suite drives it: a plain WebSocket to
 * `/v1/responses` with the key in `Authorization` on the upgrade, `response.create` events, one
 * response at a time, each ending at its terminal event (or an `error` event with a `code`).
 * Every event must conform to the published schema, every terminal response be a response
 * resource. `websocket-generate-false` is of the suite's WebSocket tests as first published (the
 * specification's text and the suite dropped `generate` before the 2026-04-24 release; OpenAI's
 * WebSocket mode has it, and Turnline serves it on a socket).
 */
const KEY = 'responses-socket-compliance-0123456789'
const MODEL = 'gpt-4o-mini'
const entry = useEntryWithMock('socket-compliance', {
  TURNLINE_API_KEYS: `${KEY}=compliance`,
  TURNLINE_LOG: 'off',
})

type Json = Record<string, unknown>

/** The model repeats the code word it was told earlier in the conversation, if any. */
function modelTurn(request: MockRequest) {
  const messages = (request.body.messages ?? []) as { content?: unknown }[]
  const said = messages.map((m) => JSON.stringify(m.content ?? '')).join(' ')
  const word = /code word: (\w+)/.exec(said)?.[1]
  return { text: word ? word : 'OK' }
}

beforeAll(() => entry.mock.respond(modelTurn))

const connect = () => openResponsesSocket(socketUrl(entry.url), { Authorization: `Bearer ${KEY}` })

/** Sends one create and reads its response as the suite does. */
async function create(socket: ResponsesSocketClient, body: Json): Promise<SocketTurn> {
  socket.send({ type: 'response.create', model: MODEL, ...body })
  return socket.turn()
}

function passes(turn: SocketTurn): Json & { id: string; output: Json[] } {
  expect(turn.events.length).toBeGreaterThan(0)
  assertConformingStream(turn.events, { extensions: false })
  const response = turn.response
  expect(response, JSON.stringify(turn.last)).toBeDefined()
  expect(responseResourceErrors(response, false)).toEqual([])
  expect(response?.status).toBe('completed')
  return response as Json & { id: string; output: Json[] }
}

function errorCode(turn: SocketTurn): unknown {
  expect(turn.last.type).toBe('error')
  expect(socketErrorEventErrors(turn.last)).toEqual([])
  return (turn.last.error as Json).code
}

describe('the compliance suite websocket scenarios against npm start', () => {
  it('websocket-response', async () => {
    const socket = await connect()
    const turn = await create(socket, {
      input: [{ type: 'message', role: 'user', content: 'Count from 1 to 3.' }],
    })
    passes(turn)
    socket.close()
  })

  it('websocket-sequential-responses', async () => {
    const socket = await connect()
    passes(await create(socket, { store: false, input: 'Reply with exactly: first' }))
    passes(await create(socket, { store: false, input: 'Reply with exactly: second' }))
    socket.close()
  })

  it('websocket-continuation', async () => {
    const socket = await connect()
    const first = passes(
      await create(socket, {
        store: false,
        input: 'Remember the code word: cobalt. Reply with OK.',
      }),
    )
    const second = passes(
      await create(socket, {
        store: false,
        previous_response_id: first.id,
        input: 'What is the code word? Reply with only the code word.',
      }),
    )
    expect(JSON.stringify(second.output)).toContain('cobalt')
    socket.close()
  })

  it('websocket-reconnect-store-false-recovery', async () => {
    const socket = await connect()
    const first = passes(
      await create(socket, {
        store: false,
        input: 'Remember the code word: copper. Reply with OK.',
      }),
    )
    socket.close()
    const again = await connect()
    const reconnect = await create(again, {
      store: false,
      previous_response_id: first.id,
      input: 'Try to continue after reconnect. Reply with exactly: reconnected',
    })
    expect(errorCode(reconnect)).toBe('previous_response_not_found')
    passes(
      await create(again, {
        store: false,
        input: [{ type: 'message', role: 'user', content: 'Start again: reply with recovered' }],
      }),
    )
    again.close()
  })

  it('websocket-previous-response-not-found', async () => {
    const socket = await connect()
    const turn = await create(socket, {
      store: false,
      previous_response_id: `resp_openresponses_missing_${Date.now()}`,
      input: 'This should fail because the previous response is missing.',
    })
    expect(errorCode(turn)).toBe('previous_response_not_found')
    socket.close()
  })

  it('websocket-failed-continuation-evicts-cache', async () => {
    const socket = await connect()
    const first = passes(
      await create(socket, {
        store: false,
        input: 'Remember the code word: ember. Reply with OK.',
      }),
    )
    const failed = await create(socket, {
      store: false,
      previous_response_id: first.id,
      input: [
        {
          type: 'function_call_output',
          call_id: 'call_openresponses_missing',
          output: 'No matching tool call exists in the previous response.',
        },
      ],
    })
    expect(failed.last.type).toBe('error')
    expect(failed.last.status).toBe(400)
    const retry = await create(socket, {
      store: false,
      previous_response_id: first.id,
      input: 'Try to continue after the failed turn. Reply with exactly: stale',
    })
    expect(errorCode(retry)).toBe('previous_response_not_found')
    socket.close()
  })

  it('websocket-generate-false', async () => {
    const socket = await connect()
    const warmup = passes(
      await create(socket, {
        store: false,
        generate: false,
        instructions: 'Answer tersely.',
        input: 'Remember the code word: basalt. Prepare to answer with exactly: warmed',
      }),
    )
    expect(warmup.id).toMatch(/^resp_/)
    expect(warmup.output).toEqual([])
    expect(warmup.instructions).toBe('Answer tersely.')
    const calls = entry.mock.requests.length
    const generated = passes(
      await create(socket, {
        store: false,
        previous_response_id: warmup.id,
        input: 'Reply with exactly: warmed',
      }),
    )
    // Only the generated response called the model, with what the warm-up carried first.
    expect(entry.mock.requests.length).toBe(calls + 1)
    const sent = JSON.stringify(entry.mock.requests.at(-1)?.body.messages)
    expect(sent).toContain('Answer tersely.')
    expect(sent.indexOf('Prepare to answer')).toBeLessThan(sent.indexOf('Reply with exactly'))
    expect(generated.previous_response_id).toBe(warmup.id)
    expect(generated.instructions).toBe('Answer tersely.')
    expect(JSON.stringify(generated.output)).toContain('basalt')
    socket.close()
  })

  it('websocket-compact-new-chain', async () => {
    const compacted = await fetch(`${entry.url}/v1/responses/compact`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        input: [
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'Remember the compaction code word: slate.' }],
          },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'OK.' }] },
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'Compress this conversation for later.' }],
          },
        ],
      }),
    })
    expect(compacted.status).toBe(200)
    const { output } = (await compacted.json()) as { output: Json[] }
    expect(Array.isArray(output)).toBe(true)
    const socket = await connect()
    passes(
      await create(socket, {
        store: false,
        input: [
          ...output,
          {
            type: 'message',
            role: 'user',
            content: 'Continue from here. Reply with exactly: compacted',
          },
        ],
        tools: [],
      }),
    )
    socket.close()
  })
})

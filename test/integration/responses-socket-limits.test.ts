import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_SOCKET_LIMITS, responsesSocket } from '../../functions/http/responses-socket.ts'
import type { SocketPeer } from '../../functions/http/socket-connection.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { startEngine } from '../support/engine-harness.ts'
import { gate } from '../support/gate.ts'
import { socketErrorEventErrors } from '../support/open-responses-schema.ts'
import { until } from '../support/until.ts'

/**
 * The limits of one WebSocket connection, on the platform-free protocol core with a real engine
 * (memory adapters, the mock OpenAI model) and an in-process transport that records what the
 * core sends: the connection's age limit (after the running response), the queue of waiting
 * events, the message size, a key that no longer admits the connection's requests.
 */
type Json = Record<string, unknown>
let engine: Awaited<ReturnType<typeof startEngine>>

beforeAll(async () => {
  engine = await startEngine()
})
afterAll(async () => {
  await engine?.close()
})

/** A transport that keeps every message and resolves `closed` with the close code. */
function recordingPeer() {
  const messages: Json[] = []
  let waiter: (() => void) | undefined
  let closeWith: (value: { code: number; reason: string }) => void = () => {}
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    closeWith = resolve
  })
  const peer: SocketPeer = {
    send: (text) => {
      messages.push(JSON.parse(text) as Json)
      waiter?.()
    },
    close: (code, reason) => closeWith({ code, reason }),
  }
  /** Resolves once a message of this type has arrived. */
  const arrived = async (type: string) => {
    while (!messages.some((m) => m.type === type)) {
      await new Promise<void>((resolve) => {
        waiter = resolve
      })
    }
  }
  return { peer, messages, closed, arrived }
}

function open(
  peer: SocketPeer,
  limits: Partial<typeof DEFAULT_SOCKET_LIMITS> & { maxMessageBytes?: number } = {},
  admit: () => Promise<string> = async () => 'alpha',
) {
  return responsesSocket(peer, {
    api: engine.service,
    log: () => {},
    limits: { ...DEFAULT_SOCKET_LIMITS, maxMessageBytes: 1024 * 1024, ...limits },
    admit,
    extensions: false,
  })
}

const create = (input: string) => JSON.stringify({ type: 'response.create', input })

describe('the limits of a WebSocket connection', () => {
  it('ends at its age limit only after the running response', async () => {
    const held = gate()
    engine.mock.enqueue({ text: 'finished', hold: held.promise })
    const { peer, messages, closed, arrived } = recordingPeer()
    // The limit passes while the response waits on the model (its request is real I/O).
    const session = open(peer, { maxAgeMs: 0 })
    session.message(create('slow'))
    await arrived('response.in_progress')
    held.open()
    expect(await closed).toEqual({ code: 1000, reason: 'websocket_connection_limit_reached' })
    const types = messages.map((m) => m.type)
    expect(types.at(-2)).toBe('response.completed')
    expect(messages.at(-1)).toMatchObject({
      type: 'error',
      status: 400,
      error: { code: 'websocket_connection_limit_reached' },
    })
    expect(socketErrorEventErrors(messages.at(-1))).toEqual([])
    session.closed()
  })

  it('closes with 1008 when more events wait than the queue holds', async () => {
    const held = gate()
    engine.mock.enqueue({ text: 'one', hold: held.promise })
    const { peer, messages, closed, arrived } = recordingPeer()
    const session = open(peer, { maxQueued: 1 })
    session.message(create('runs'))
    await arrived('response.in_progress')
    session.message(create('waits'))
    session.message(create('one too many'))
    expect((await closed).code).toBe(1008)
    session.closed()
    // The running response goes on to its end, as one whose client went away.
    held.open()
    await until('the running response to reach the model', () =>
      engine.mock.requests.some((r) => JSON.stringify(r.body).includes('runs')) ? true : undefined,
    )
    // Nothing is sent once closed, and the waiting event never ran.
    expect(messages.every((m) => m.type !== 'response.completed')).toBe(true)
    expect(engine.mock.requests.filter((r) => JSON.stringify(r.body).includes('waits'))).toEqual([])
  })

  it('answers an oversized or binary message with an error event and stays open', async () => {
    const { peer, messages } = recordingPeer()
    const session = open(peer, { maxMessageBytes: 200 })
    session.message(create('x'.repeat(300)))
    session.message(new Uint8Array([123, 125]))
    await until('two error events', () => (messages.length >= 2 ? true : undefined))
    expect(messages[0]).toMatchObject({ status: 413, error: { code: 'payload_too_large' } })
    expect(messages[1]).toMatchObject({ status: 400, error: { code: 'invalid_input' } })
    for (const message of messages) expect(socketErrorEventErrors(message)).toEqual([])
    session.closed()
  })

  it('refuses a response.create once the key no longer admits it', async () => {
    engine.mock.enqueue({ text: 'admitted' })
    let revoked = false
    const admit = async () => {
      if (revoked) throw new TurnlineError('unauthorized', 'invalid API key')
      return 'alpha'
    }
    const { peer, messages, arrived } = recordingPeer()
    const session = open(peer, {}, admit)
    session.message(create('first'))
    await arrived('response.completed')
    revoked = true
    session.message(create('second'))
    await arrived('error')
    expect(messages.at(-1)).toMatchObject({ status: 401, error: { code: 'unauthorized' } })
    session.closed()
  })
})

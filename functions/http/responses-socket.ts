import type { SessionApi } from '../../src/core/session-api.ts'
import type { ErrorLog } from './http-errors.ts'
import { CLOSE, type SocketPeer, type SocketSession } from './socket-connection.ts'
import { connectionLimitEvent, socketErrorEvent } from './socket-error-event.ts'
import { type KeptResponse, parseResponseCreate, runSocketResponse } from './socket-response.ts'

/** The limits of one connection (docs/http-api.md, "WebSocket mode"). */
export interface SocketLimits {
  /** Largest message, in bytes: the body limit of `POST /v1/responses`. */
  maxMessageBytes: number
  /** Messages waiting behind the running response; one more closes the connection (1008). */
  maxQueued: number
  /** Age at which the connection ends (the specification's 60 minutes). */
  maxAgeMs: number
}

export const DEFAULT_SOCKET_LIMITS: Omit<SocketLimits, 'maxMessageBytes'> = {
  maxQueued: 16,
  maxAgeMs: 60 * 60 * 1000,
}

export interface ResponsesSocketOptions {
  api: SessionApi
  log: ErrorLog
  limits: SocketLimits
  /**
   * Admits one `response.create` as the HTTP app admits a request: the connection's key
   * authenticated again (a key revoked since the upgrade stops working) and the request counted
   * in the tenant's window. Resolves to the tenant; rejects with the HTTP error.
   */
  admit: () => Promise<string>
  /** Turnline's `vtcode:*` items and events, as the upgrade's `Turnline-Extensions` asked. */
  extensions: boolean
}

/**
 * The Open Responses WebSocket mode on one connection (specification 2026-04-24): each text
 * message is a `response.create` event; the responses run one at a time, in the order their
 * events arrived (later ones wait, at most `maxQueued`); each response's events are sent as the
 * HTTP stream has them, one message each; a failure is a `WebSocketErrorEvent`
 * (socket-error-event.ts) and the connection stays open. The most recent `store: false`
 * response is kept in the connection's memory, so the next `response.create` may continue it
 * with `previous_response_id` and only the new input; a continuation that fails forgets the
 * response it named; closing the connection forgets it too. At `maxAgeMs` the connection ends
 * with `websocket_connection_limit_reached` (after the running response, if any).
 */
export function responsesSocket(peer: SocketPeer, options: ResponsesSocketOptions): SocketSession {
  const { limits } = options
  const queue: (string | Uint8Array)[] = []
  let running = false
  let closed = false
  let expired = false
  let kept: KeptResponse | undefined

  const send = (event: object) => {
    if (!closed) peer.send(JSON.stringify(event))
  }
  const close = (code: number, reason: string) => {
    if (closed) return
    closed = true
    queue.length = 0
    kept = undefined
    clearTimeout(timer)
    peer.close(code, reason)
  }
  const expire = () => {
    send(connectionLimitEvent(Math.round(limits.maxAgeMs / 60_000)))
    close(CLOSE.normal, 'websocket_connection_limit_reached')
  }
  const timer = setTimeout(() => {
    expired = true
    if (!running) expire()
  }, limits.maxAgeMs)

  async function handle(data: string | Uint8Array): Promise<void> {
    let named: string | undefined
    try {
      const create = parseResponseCreate(data, limits.maxMessageBytes)
      named = create.request.previous_response_id ?? undefined
      const tenant = await options.admit()
      const end = await runSocketResponse(create, {
        api: options.api,
        log: options.log,
        tenant,
        extensions: options.extensions,
        kept,
        send,
      })
      if (end.failed && named !== undefined && kept?.id === named) kept = undefined
      if (end.kept && !closed) kept = end.kept
    } catch (error) {
      // A continuation that fails forgets the response it continued (the specification).
      if (named !== undefined && kept?.id === named) kept = undefined
      send(socketErrorEvent(error, options.log))
    }
  }

  async function drain(): Promise<void> {
    if (running) return
    running = true
    try {
      for (let next = queue.shift(); next !== undefined && !closed; next = queue.shift()) {
        await handle(next)
        if (expired) break
      }
    } finally {
      running = false
    }
    if (expired) expire()
  }

  return {
    message(data) {
      if (closed) return
      if (queue.length >= limits.maxQueued) {
        close(CLOSE.policy, `more than ${limits.maxQueued} response.create events waiting`)
        return
      }
      queue.push(data)
      void drain().catch((error: unknown) => {
        options.log({ level: 'error', msg: 'websocket session failed', error: String(error) })
        close(CLOSE.internal, 'internal error')
      })
    },
    closed() {
      closed = true
      queue.length = 0
      kept = undefined
      clearTimeout(timer)
    },
  }
}

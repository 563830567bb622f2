import { TurnlineError } from '../../src/contract/errors.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ResponsesRequest } from '../../src/contract/open-responses-request.ts'
import { ResponsesRequestSchema } from '../../src/contract/open-responses-request.ts'
import type { ResponseRunRequest } from '../../src/contract/open-responses-run.ts'
import { toResponseRun } from '../../src/contract/open-responses-run.ts'
import {
  ENVELOPE_FIELDS,
  ResponseCreateEnvelopeSchema,
} from '../../src/contract/response-create-event.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { SessionApi, ViewEvent } from '../../src/core/session-api.ts'
import { utf8Length } from '../../src/shared/utf8-length.ts'
import { type ErrorLog, mapError } from './http-errors.ts'
import { parseJsonDocument } from './read-body.ts'
import { parseInput } from './request-input.ts'
import { afterWarmup, type WarmupResponse, warmupResponse } from './socket-warmup.ts'

/** A `response.create` event, validated: the request, its idempotency key, `generate`. */
export interface ResponseCreate {
  request: ResponsesRequest
  idempotencyKey?: string
  /** `generate: false`: a warm-up (socket-warmup.ts). */
  warmup?: true
}

/**
 * Parses one client message as the HTTP route parses a body (the same byte limit, JSON rules
 * and request schema; errors name the field as the client wrote it): a text message holding a
 * `response.create` event.
 */
export function parseResponseCreate(data: string | Uint8Array, maxBytes: number): ResponseCreate {
  if (typeof data !== 'string') {
    throw new TurnlineError(
      'invalid_input',
      'send each response.create event as a text message holding its JSON (binary messages are not read)',
      { details: { field: 'body' } },
    )
  }
  if (utf8Length(data) > maxBytes) {
    throw new TurnlineError('payload_too_large', `message exceeds ${maxBytes} bytes`, {
      details: { max_bytes: maxBytes },
    })
  }
  const value = parseJsonDocument(data, 'message')
  const envelope = parseInput(ResponseCreateEnvelopeSchema, value, 'body')
  const fields: Record<string, unknown> = { ...envelope }
  for (const name of ENVELOPE_FIELDS) delete fields[name]
  const request = parseInput(ResponsesRequestSchema, fields, 'body')
  const key = envelope.idempotency_key
  return {
    request,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    ...(envelope.generate === false ? { warmup: true as const } : {}),
  }
}

/**
 * The response the connection keeps in memory, so the next one can continue it: a `store: false`
 * response (its transcript) or a warm-up (the request it carried).
 */
export type KeptResponse = { id: string; transcript: HistoryMessage[] } | WarmupResponse

export interface SocketResponseOptions {
  api: SessionApi
  log: ErrorLog
  tenant: string
  /** Show Turnline's `vtcode:*` items and events (the upgrade's `Turnline-Extensions: vtcode`). */
  extensions: boolean
  /** The `store: false` response this connection keeps, if any. */
  kept: KeptResponse | undefined
  /** Sends one event of the response. */
  send: (event: object) => void
}

/** How a response ended, for the connection's memory of `store: false` responses. */
export interface SocketResponseEnd {
  /** The response failed (`response.failed`, or an error before it started). */
  failed: boolean
  /** A `store: false` response to keep in memory. */
  kept?: KeptResponse
}

/**
 * Runs one response on the connection, as `POST /v1/responses` with `stream: true` does: the
 * same session, turn and bridge, each event sent as its own message (no SSE framing, no
 * `[DONE]`: the response's terminal event ends it). A `previous_response_id` naming the
 * `store: false` response the connection keeps continues it from memory, one naming its warm-up
 * starts from what the warm-up carried (`generate: false`, socket-warmup.ts); any other is looked
 * up as over HTTP. Rejects when nothing was sent yet (the caller sends an error event); a fault
 * after the response started ends it with `response.failed`, as the HTTP stream does.
 */
export async function runSocketResponse(
  { request, idempotencyKey, warmup }: ResponseCreate,
  options: SocketResponseOptions,
): Promise<SocketResponseEnd> {
  const { api, tenant, kept } = options
  if (warmup) return { failed: false, kept: warmupResponse(request, idempotencyKey, options) }
  const previous = request.previous_response_id ?? undefined
  const fromMemory = previous !== undefined && kept?.id === previous ? kept : undefined
  const warmed = fromMemory && 'warmup' in fromMemory ? fromMemory.warmup : undefined
  const run = toResponseRun(
    warmed ? afterWarmup(warmed, request) : request,
    Math.floor(Date.now() / 1000),
  )
  const forgets = request.store === false
  const call: ResponseRunRequest = {
    run,
    ...(fromMemory && 'transcript' in fromMemory
      ? { previousTranscript: fromMemory.transcript }
      : {}),
    ...(previous === undefined || warmed ? {} : { previousResponseId: previous }),
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(forgets ? { keepTranscript: true } : {}),
  }
  const view = api.openResponsesView(run.config, { extensions: options.extensions })
  let failed = false
  let sent = 0
  // The terminal event waits until the run has returned: a client that reads it may act on the
  // response at once (continue it, on this connection or another) and find it as it will stay
  // (a store: false one erased, and kept by this connection).
  const held: object[] = []
  const send = (events: ViewEvent[]) => {
    for (const { event } of events) {
      if (event.type === 'response.failed') failed = true
      if (TERMINAL.has(event.type)) held.push(event)
      else options.send(event)
      sent += 1
    }
  }
  let streamed = 0
  try {
    const result = await api.respond(tenant, call, {
      onEvent: (event: ThreadEvent) => {
        streamed += 1
        send(view.events(event))
      },
    })
    for (const event of result.events.slice(streamed)) send(view.events(event))
    // A turn that waits on the client's function calls ends the response with them; a turn
    // paused otherwise ends it incomplete.
    send(view.endingEvents(result))
    for (const event of held.splice(0)) options.send(event)
    const id = (view.response as { id?: string } | undefined)?.id
    const keep =
      forgets && !failed && result.transcript && id
        ? { id, transcript: result.transcript }
        : undefined
    return { failed, ...(keep ? { kept: keep } : {}) }
  } catch (error) {
    if (sent === 0) throw error
    const { message } = mapError(error, options.log).body.error
    // Ended already (a fault after it, such as erasing a store: false response): its end stands.
    if (held.length === 0) send(view.events({ type: 'error', message }))
    for (const event of held.splice(0)) options.send(event)
    return { failed: true }
  }
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

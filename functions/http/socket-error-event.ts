import { type ErrorLog, mapError } from './http-errors.ts'
import { type OpenResponsesErrorBody, openResponsesErrorBody } from './open-responses-errors.ts'

/**
 * A failure on an Open Responses WebSocket (`WebSocketErrorEvent` of the specification):
 * `{"type": "error", "status": <the HTTP status the same failure has over HTTP>, "error": {type,
 * code, param, message, details?}}`, the envelope of the HTTP errors on `/v1/responses`. A
 * `previous_response_id` the server does not have is `previous_response_not_found`, the code the
 * specification gives it on a socket (over HTTP it is 404 `not_found` naming the field).
 */
export interface SocketErrorEvent {
  type: 'error'
  status: number
  error: OpenResponsesErrorBody['error']
}

export function socketErrorEvent(error: unknown, log: ErrorLog): SocketErrorEvent {
  const mapped = mapError(error, log)
  const body = openResponsesErrorBody(mapped).error
  const retryAfter = mapped.headers['retry-after']
  const code =
    body.code === 'not_found' && body.param === 'previous_response_id'
      ? 'previous_response_not_found'
      : body.code
  // On a socket the Idempotency-Key is the event's `idempotency_key`.
  const param = body.param === 'header.idempotency-key' ? 'idempotency_key' : body.param
  return {
    type: 'error',
    status: mapped.status,
    error: {
      ...body,
      code,
      param,
      ...(retryAfter === undefined
        ? {}
        : { details: { ...body.details, retry_after: retryAfter } }),
    },
  }
}

/** The event that ends a connection open for longer than the specification's 60 minutes. */
export function connectionLimitEvent(maxMinutes: number): SocketErrorEvent {
  return {
    type: 'error',
    status: 400,
    error: {
      type: 'invalid_request',
      code: 'websocket_connection_limit_reached',
      param: '',
      message: `this connection reached its limit of ${maxMinutes} minutes: open a new one to continue (a store: false response cannot be continued on it; start again from the whole conversation)`,
    },
  }
}

import { HTTP_STATUS } from '../../src/contract/error-status.ts'
import type { ErrorCode } from '../../src/contract/errors.ts'
import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import { jsonResponse } from './json-response.ts'

export { HTTP_STATUS }

/**
 * Maps errors to HTTP answers; the code → status table is `src/contract/error-status.ts` (a
 * client reads it too). Every error body is `{"error":{"code","message","details?"}}`.
 */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> }
}

export interface MappedError {
  status: number
  body: ErrorBody
  headers: Record<string, string>
}

export type ErrorLog = (entry: Record<string, unknown>) => void

const GENERIC_MESSAGE = 'internal error; the server log has the details'

/**
 * Maps any thrown value to a status, body and headers. TurnlineErrors keep their code and
 * message; 5xx faults and unknown values are logged with their detail, and unknown values get
 * a generic message (never a stack trace).
 */
export function mapError(error: unknown, log: ErrorLog): MappedError {
  if (!isTurnlineError(error)) {
    log({ level: 'error', msg: 'unhandled error', error: describe(error) })
    return {
      status: 500,
      body: { error: { code: 'internal', message: GENERIC_MESSAGE } },
      headers: {},
    }
  }
  const status = HTTP_STATUS[error.code] ?? 500
  if (status >= 500) {
    log({ level: 'error', msg: 'request failed', code: error.code, error: describe(error) })
  }
  const headers: Record<string, string> = {}
  const retryAfter = error.retryAfter ?? (error.code === 'session_busy' ? 1 : undefined)
  if (
    retryAfter !== undefined &&
    Number.isFinite(retryAfter) &&
    (status === 409 || status === 429 || status === 503)
  ) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)))
  }
  const body: ErrorBody = {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details && Object.keys(error.details).length > 0 ? { details: error.details } : {}),
    },
  }
  return { status, body, headers }
}

/** The JSON response of a mapped error. */
export function errorResponse(error: unknown, log: ErrorLog): Response {
  const mapped = mapError(error, log)
  return jsonErrorResponse(mapped)
}

export function jsonErrorResponse(mapped: MappedError): Response {
  return jsonResponse(errorJson(mapped.body), mapped.status, mapped.headers)
}

/** JSON of an error body; details that cannot be serialized are dropped, never fatal. */
export function errorJson(body: ErrorBody): string {
  try {
    return JSON.stringify(body)
  } catch {
    const { code, message } = body.error
    return JSON.stringify({ error: { code, message } })
  }
}

function describe(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const logDetails = isTurnlineError(error) ? error.logDetails : undefined
    return {
      name: error.name,
      message: error.message,
      ...(logDetails ? { details: logDetails } : {}),
      ...(error.stack ? { stack: error.stack } : {}),
      ...(error.cause !== undefined ? { cause: String(error.cause) } : {}),
    }
  }
  return { value: String(error) }
}

/**
 * The answer for a request no route serves: 405 `method_not_allowed` with `Allow` when the path
 * is known (`methods` serve it), else 404 `not_found`; `answer` writes the error (the
 * `/v1/responses` routes use the Open Responses envelope).
 */
export function notFound(
  method: string,
  path: string,
  methods: readonly string[] | undefined,
  log: ErrorLog,
  answer: (error: unknown, log: ErrorLog) => Response = errorResponse,
): Response {
  const shown = path.slice(0, 200)
  if (methods === undefined) {
    return answer(new TurnlineError('not_found', `no route ${method} ${shown}`), log)
  }
  const refusal = new TurnlineError(
    'method_not_allowed',
    `${shown} does not serve ${method}; it serves ${methods.join(', ')}`,
    { details: { allow: [...methods] } },
  )
  const response = answer(refusal, log)
  response.headers.set('allow', methods.join(', '))
  return response
}

import type { ErrorCode } from './errors.ts'

/**
 * The HTTP status of every error code: the server answers with it (functions/http/http-errors.ts)
 * and a client reads it back for an error that arrived inside a stream (`event: error`), where
 * the response's own status was already 200.
 *
 * - `model_not_configured` → 422: the deployment has no model endpoint (or the session names no
 *   model); retrying unchanged cannot help, so it is not a 5xx that invites retries.
 * - `idempotency_key_reused` → 422: an Idempotency-Key sent again with a different request (as
 *   Stripe answers); the first answer is not replayed for it.
 * - `model_error` / `tool_error` → 502: an upstream (the model provider, a tool receiver) failed.
 * - `rate_limited` / `too_many_concurrent_turns` / `quota_exceeded` → 429 with Retry-After: the
 *   tenant's request window, running turns or daily tokens/cost (docs/configuration.md#tenancy).
 * - `forbidden` → 403: an unauthenticated server refuses a request addressed to a name that is
 *   not this machine's, or sent by a page of another site (functions/http/host-guard.ts).
 * - `method_not_allowed` → 405 with `Allow`: the path exists, the method does not.
 */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  session_busy: 409,
  session_completed: 409,
  follow_up_queue_full: 409,
  payload_too_large: 413,
  rate_limited: 429,
  quota_exceeded: 429,
  too_many_concurrent_turns: 429,
  idempotency_key_reused: 422,
  model_not_configured: 422,
  model_error: 502,
  tool_error: 502,
  storage_unavailable: 503,
  coordinator_unavailable: 503,
  runner_unavailable: 503,
  corrupt_data: 500,
  unsupported_version: 500,
  buffer_overflow: 500,
  event_cap_reached: 500,
  internal: 500,
}

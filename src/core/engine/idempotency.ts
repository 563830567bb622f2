import type { EngineState, TurnRecord } from '../../contract/engine-state.ts'
import { TurnRecordSchema } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import { sha256HexOfText } from '../../shared/sha256-small.ts'
import type { SessionRef } from '../../store/session-ref.ts'

/**
 * Idempotency keys (`Idempotency-Key`, and the keys the service derives itself). A key is
 * scoped to one session: the coordinator stores it as `<session id>/<key>` under the tenant, so
 * the same key on two sessions names two operations. Each use records a fingerprint of the
 * operation and its request; the key sent again with anything else is `idempotency_key_reused`
 * (422), as Stripe answers, instead of a silent replay of the first answer.
 *
 * Callers' keys are `[A-Za-z0-9._:-]{1,200}` (checked at the HTTP boundary). Keys the service
 * makes for itself contain a `/` (e.g. `delivery/<digest>` for an automation run), a namespace
 * no caller can reach.
 */
export interface IdempotentCall {
  key: string
  /** Hex SHA-256 of the operation name and its request, canonical JSON. */
  fingerprint: string
}

/** The call's key and fingerprint, or undefined without a key. */
export async function idempotentCall(
  key: string | undefined,
  operation: string,
  request: unknown,
): Promise<IdempotentCall | undefined> {
  if (key === undefined) return undefined
  return { key, fingerprint: await fingerprint(operation, request) }
}

/** The coordinator's key of a call on one session (tenant-scoped by the coordinator). */
export function sessionScopedKey(ref: SessionRef, call: IdempotentCall): string {
  return `${ref.sessionId}/${call.key}`
}

/** Refuses a key whose first use was another request (a record without a fingerprint passes). */
export function assertSameRequest(recorded: string | undefined, call: IdempotentCall): void {
  if (recorded === undefined || recorded === call.fingerprint) return
  throw new TurnlineError(
    'idempotency_key_reused',
    'this Idempotency-Key was already used with a different request on this session; ' +
      'send a new key for a new request',
    { details: { field: 'header.idempotency-key' } },
  )
}

/** The turn record of the call's key in the engine state, checked against its request. */
export function recordedTurn(
  state: EngineState,
  call: IdempotentCall | undefined,
): TurnRecord | undefined {
  if (call === undefined) return undefined
  const record = state.recent_turns.find((r) => r.key === call.key)
  if (record) assertSameRequest(record.request_fingerprint, call)
  return record
}

/** The turn record stored in the coordinator's idempotency record, checked likewise. */
export function coordinatorRecord(response: string, call: IdempotentCall): TurnRecord {
  let parsed: unknown
  try {
    parsed = JSON.parse(response)
  } catch {
    parsed = undefined
  }
  const result = TurnRecordSchema.safeParse(parsed)
  if (!result.success) {
    throw new TurnlineError('corrupt_data', 'the idempotency record of this key is unreadable')
  }
  assertSameRequest(result.data.request_fingerprint, call)
  return result.data
}

function fingerprint(operation: string, request: unknown): Promise<string> {
  return sha256HexOfText(canonicalJson({ operation, request }))
}

/** JSON with object keys sorted and undefined members left out: equal requests, equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

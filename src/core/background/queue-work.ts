import type { TurnRequest } from '../../contract/api.ts'
import type { WorkRecord, WorkSource } from '../../contract/work-record.ts'
import { sha256Hex } from '../../shared/sha256-hex.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import { assertSameRequest, idempotentCall } from '../engine/idempotency.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { QueuedWork } from './background-api.ts'

/** What is recorded: one turn of one session, under its idempotency key. */
export interface WorkRequest {
  tenant: string
  sessionId: string
  /** The caller's Idempotency-Key; without one the server makes a key of its own. */
  idempotencyKey: string | undefined
  request: TurnRequest
  source: WorkSource
  /** A loop step instead of a session's turn: which loop, and which step it runs. */
  loopStep?: { loop_id: string; step_index: number; run_id?: string }
}

/**
 * Records a background turn create-only (contract/work-record.ts) and says whether it is new.
 * The work id derives from the key, so a retry with the same key finds the first record (or,
 * once it ran, writes it again: the worker then replays the recorded outcome, never a second
 * run); the same key with another request is 422 `idempotency_key_reused`, as for any turn. The
 * fingerprint is the one the turn engine checks (`idempotentCall`), so both agree.
 */
export async function queueWork(
  deps: ServiceDeps,
  queue: WorkQueue,
  input: WorkRequest,
): Promise<QueuedWork> {
  const key = input.idempotencyKey ?? serverKey(deps)
  const operation = input.loopStep ? 'loop_step' : 'turn'
  const call = await idempotentCall(key, operation, input.request)
  if (!call) throw new Error('unreachable: a background turn always has a key')
  const record: WorkRecord = {
    format: 'turnline.work',
    version: 1,
    work_id: await workIdOf(key),
    kind: input.loopStep ? 'loop_step' : 'turn',
    source: input.source,
    tenant: input.tenant,
    session_id: input.sessionId,
    ...input.loopStep,
    idempotency_key: key,
    fingerprint: call.fingerprint,
    request: input.request,
    created_at: new Date(deps.clock.now()).toISOString(),
    attempts: 0,
  }
  const written = await queue.record(record)
  const queued = {
    work_id: record.work_id,
    session_id: input.sessionId,
    idempotency_key: key,
  }
  if (written.created) return { ...queued, duplicate: false }
  const existing = written.existing?.record
  if (existing) assertSameRequest(existing.fingerprint, call)
  return { ...queued, duplicate: true }
}

/**
 * The session of an exec run with an Idempotency-Key (`ex-…`, from the key): a retry finds it,
 * whether the run was recorded for a worker or runs in the request.
 */
export async function execSessionIdOf(key: string): Promise<string> {
  return `ex-${(await workIdOf(key)).slice(0, 24)}`
}

/** The work id of a key: the first 32 hex characters of its SHA-256. */
export async function workIdOf(key: string): Promise<string> {
  return (await sha256Hex(key)).slice(0, 32)
}

/** A key the server makes for a request without one: with a `/`, which no caller's key has. */
export function serverKey(deps: Pick<ServiceDeps, 'ids'>): string {
  return `background/${deps.ids.uuid()}`
}

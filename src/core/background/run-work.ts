import type { TurnStatus } from '../../contract/api.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import {
  loopWorkFolder,
  type WorkError,
  type WorkLocation,
  type WorkRecord,
} from '../../contract/work-record.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { StoredWork, WorkQueue } from '../../store/work-queue.ts'
import { recordWorkFailed } from '../callbacks/work-callbacks.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { stepLoop } from '../loops/loop-service.ts'
import { stepTurn } from '../turn/step-turn.ts'
import type { WorkRunOutcome } from './background-api.ts'
import { DEFAULT_QUOTA_WAIT, expiredError, expiresAt, waitAfterRefusal } from './quota-wait.ts'
import { runLoopRunStep, stopLoopRun } from './run-loop.ts'

/** A loop's background steps' folder starts so (`loop.<loop_id>`); no session id does. */
const LOOP_FOLDER = loopWorkFolder('')

/** Runs of one record that may end in a retryable fault before it is marked failed. */
export const MAX_WORK_ATTEMPTS = 8

/** Refusals that pass with time: the record waits, no attempt is counted. */
const WAIT_CODES = ['session_busy', 'too_many_concurrent_turns', 'rate_limited'] as const

/**
 * Runs one pending record through the turn engine, exactly once like any turn: the record's
 * idempotency key makes a second run (a duplicate trigger, a sweep, another instance) replay the
 * committed outcome, and a turn its key opened that a crashed instance left open is continued
 * from its last commit once that instance's lease lapsed (step-turn.ts) — a committed tool
 * invocation is never run again. The record is deleted once the turn has an outcome. A loop
 * step is the loop's step recorded with it, resumed where it stopped (loop-step.ts), and
 * nothing once that step ran.
 */
export async function runWork(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  at: WorkLocation,
): Promise<WorkRunOutcome> {
  const read = await queue.read(at).catch((error: unknown) => {
    if (isTurnlineError(error, 'corrupt_data')) return error
    throw error
  })
  if (read instanceof TurnlineError) return failUnreadable(deps, locator, queue, at, read)
  if (!read || read.record.failed) return { outcome: 'gone' }
  const { record } = read
  if (record.kind === 'loop_step' && (await queue.isDone(at))) {
    await queue.remove(at)
    return { outcome: 'gone' }
  }
  if (record.waiting) {
    // Waiting for the quota: not before its retry time, and never past its maximum age.
    const now = deps.clock.now()
    const policy = deps.defaults.quotaWait ?? DEFAULT_QUOTA_WAIT
    if (now >= expiresAt(record, policy))
      return fail(deps, locator, queue, read, expiredError(record, now, policy))
    const wait = Date.parse(record.waiting.retry_at) - now
    if (wait > 0) return { outcome: 'busy', retryAfterMs: wait }
  }
  // The record says it runs once its turn does (the first event comes under the lease).
  let marked: Promise<StoredWork | null> | undefined
  const started = () => {
    const started_at = new Date(deps.clock.now()).toISOString()
    marked ??= queue.update(read, { ...record, started_at }).catch(() => null)
  }
  try {
    const ran =
      record.run_id !== undefined
        ? await runLoopRunStep(deps, locator, queue, record, started)
        : { status: await runRecorded(deps, locator, read.record, started) }
    await marked
    if (record.kind === 'loop_step') await queue.markDone(at, deps.clock.now())
    await queue.remove(at)
    return { outcome: 'done', ...ran }
  } catch (error) {
    if (isTurnlineError(error, ...WAIT_CODES)) {
      return { outcome: 'busy', retryAfterMs: Math.max(1, error.retryAfter ?? 1) * 1000 }
    }
    if (isTurnlineError(error, 'quota_exceeded')) {
      return waitForQuota(deps, locator, queue, (await marked) ?? read, error)
    }
    return settleFault(deps, locator, queue, (await marked) ?? read, error)
  }
}

async function runRecorded(
  deps: ServiceDeps,
  locator: SessionLocator,
  record: WorkRecord,
  /** Marks the record started: at the turn's first event, or as a loop step begins. */
  started: () => void,
): Promise<TurnStatus> {
  if (record.kind === 'loop_step' && record.loop_id !== undefined) {
    started()
    const input = typeof record.request.input === 'string' ? { input: record.request.input } : {}
    const step = await stepLoop(deps, locator, record.tenant, record.loop_id, input, {
      ...(record.step_index === undefined ? {} : { step: record.step_index }),
    })
    return step.waiting ? 'waiting' : 'completed'
  }
  const ref = await locator.locate(record.tenant, record.session_id)
  const turn = await stepTurn(deps, ref, record.request, {
    idempotencyKey: record.idempotency_key,
    onEvent: started,
  })
  return turn.status
}

/** A fault: counted and retried later when it may pass, else recorded as the work's failure. */
async function settleFault(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  stored: StoredWork,
  error: unknown,
): Promise<WorkRunOutcome> {
  const failure = workErrorOf(error, deps.clock.now())
  const attempts = stored.record.attempts + 1
  const retryable = !isTurnlineError(error) || error.retryable || error.code === 'model_error'
  if (retryable && attempts < MAX_WORK_ATTEMPTS) {
    await queue.update(stored, { ...stored.record, attempts, last_error: failure })
    return { outcome: 'retry', error: failure }
  }
  return fail(deps, locator, queue, { ...stored, record: { ...stored.record, attempts } }, failure)
}

/**
 * Refused for the tenant's daily quota: the record waits (no attempt counted), to be tried
 * again at its `retry_at` (quota-wait.ts), or fails once it is too old to wait any longer.
 */
async function waitForQuota(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  stored: StoredWork,
  refusal: TurnlineError,
): Promise<WorkRunOutcome> {
  const now = deps.clock.now()
  const policy = deps.defaults.quotaWait ?? DEFAULT_QUOTA_WAIT
  const { started_at: _started, ...record } = stored.record
  const waiting = waitAfterRefusal(record, refusal, now, policy)
  if (now >= expiresAt(record, policy)) {
    return fail(deps, locator, queue, stored, expiredError({ ...record, waiting }, now, policy))
  }
  await queue.update(stored, { ...record, waiting })
  return { outcome: 'busy', retryAfterMs: Math.max(1, Date.parse(waiting.retry_at) - now) }
}

/**
 * The work cannot run: a loop run stops saying why (its `loop.stopped` callback says so), other
 * work records its `work.failed` callback; then the record leaves the queue, failed. A crash
 * before it left records the same notice again at the next run, never a second one.
 */
async function fail(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  stored: StoredWork,
  failure: WorkError,
): Promise<WorkRunOutcome> {
  if (stored.record.run_id !== undefined) {
    await stopLoopRun(deps, stored.record, {
      reason: 'error',
      message: `${failure.code}: ${failure.message}`,
    })
  } else {
    await recordWorkFailed(deps, locator, stored.record, failure)
  }
  await queue.retire({ ...stored.record, failed: failure })
  return { outcome: 'failed', error: failure }
}

/**
 * A record that cannot be read (corrupt; a newer version is left to the instances that read it)
 * is failed as it is: its `work.failed` says so, and it leaves the queue, so no sweep runs it
 * again. A loop run whose step it was is revived by the sweep (loop-run-revival.ts).
 */
async function failUnreadable(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  at: WorkLocation,
  error: TurnlineError,
): Promise<WorkRunOutcome> {
  serviceLog(deps)({
    msg: 'background work record unreadable',
    ...at,
    error: error.message,
  })
  const failure: WorkError = {
    code: 'corrupt_data',
    message: 'its stored work record could not be read (corrupt); the server log has the details',
    at: new Date(deps.clock.now()).toISOString(),
  }
  const loop = at.session_id.startsWith(LOOP_FOLDER)
  const work = loop
    ? { ...at, kind: 'loop_step' as const, loop_id: at.session_id.slice(LOOP_FOLDER.length) }
    : { ...at, kind: 'turn' as const }
  await recordWorkFailed(deps, locator, work, failure)
  await queue.retireUnreadable(at)
  return { outcome: 'failed', error: failure }
}

function workErrorOf(error: unknown, now: number): WorkError {
  const at = new Date(now).toISOString()
  if (isTurnlineError(error)) return { code: error.code, message: error.message, at }
  return { code: 'internal', message: 'the run failed with an internal error', at }
}

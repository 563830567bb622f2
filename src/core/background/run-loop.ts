import type { TurnStatus } from '../../contract/api.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { LoopRun, LoopRunStopReason } from '../../contract/loop-run.ts'
import type { LoopRunState } from '../../contract/loop-state.ts'
import { loopWorkFolder, type WorkLocation, type WorkRecord } from '../../contract/work-record.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import { recordLoopStopped } from '../callbacks/loop-callbacks.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { loopView } from '../loops/loop-accounting.ts'
import { stepLoop } from '../loops/loop-service.ts'
import { LoopStore, type StoredLoop } from '../loops/loop-store.ts'
import type { LoopRunStarted } from './background-api.ts'
import type { PendingRecord } from './pending-room.ts'
import { queueWork, workIdOf } from './queue-work.ts'

/**
 * Loop runs (docs/agent-layer.md#loop-runs): a loop stepped in the background until its own
 * end. The run lives in the loop state (`run`); each step is a background work record (`run_id`
 * set, key `loop-run/<run>/<step>`), admitted like any step. After a step the worker records the
 * run's next step *before* it deletes the step's record, so a crash anywhere leaves a record the
 * sweep finds: run again, a step that ran does nothing (its index is past) and only records the
 * next one again (create-only, the same key). The run stops where the loop does: completed,
 * failed, paused (by `control` or a reached budget), or a step that needs a person (waiting on an
 * approval or a command, or on a required verification); each stop sends `loop.stopped`.
 */

const iso = (deps: ServiceDeps) => new Date(deps.clock.now()).toISOString()
const ATTEMPTS = 5

export interface RunOptions {
  trigger: LoopRun['trigger']
  idempotencyKey?: string | undefined
  /** A schedule's minute (RFC 3339): kept as the schedule's `last_slot` with the run's start. */
  slot?: string
  /** The new run's id, chosen before (newRunId) where its first record is named before. */
  runId?: string
}

/**
 * What starts a new run (a run running, or the one of the key, is answered, never admitted):
 * `record` names the run's first step record, which `start` writes. A request's start takes a
 * pending place (withPendingPlace); the deployment's own (schedules, revivals) just starts.
 */
export type RunAdmission = <T>(record: PendingRecord, start: () => Promise<T>) => Promise<T>

/** A new run's id. */
export function newRunId(deps: Pick<ServiceDeps, 'ids'>): string {
  return `run-${deps.ids.token().slice(0, 20)}`
}

/** The key of a run's step record (the record's name: its work id derives from it). */
export function runStepKey(runId: string, stepIndex: number): string {
  return `loop-run/${runId}/${stepIndex}`
}

/**
 * Starts a run (or answers the one running, or the key's run: `duplicate`) and makes sure the
 * step it is at is recorded — so asking again also revives a run whose record a crash lost. 409
 * for a completed, failed or paused loop. Only a new run is admitted (`admit`): a duplicate is
 * answered whatever the tenant's pending work.
 */
export async function startLoopRun(
  deps: ServiceDeps,
  queue: WorkQueue,
  tenant: string,
  loopId: string,
  options: RunOptions,
  admit: RunAdmission = (_, start) => start(),
): Promise<LoopRunStarted> {
  const store = new LoopStore(deps.sessions)
  const key = options.idempotencyKey
  const keyed = key === undefined ? undefined : `run-${(await workIdOf(`run/${key}`)).slice(0, 20)}`
  for (let attempt = 0; ; attempt++) {
    const loop = await store.load(tenant, loopId)
    const { state } = loop
    const current = state.run
    if (current && (current.state === 'running' || current.run_id === keyed)) {
      // A run stopped has no step to record (its record would do nothing): named, not written.
      const work =
        current.state === 'running'
          ? await recordRunStep(deps, queue, tenant, state)
          : await runStepWork(state.loop_id, current.run_id, state.step_index)
      return { loop: loopView(state), work, duplicate: true }
    }
    assertStartable(state)
    const now = iso(deps)
    const run: LoopRun = {
      run_id: keyed ?? options.runId ?? newRunId(deps),
      trigger: options.trigger,
      state: 'running',
      started_at: now,
      first_step: state.step_index,
    }
    const schedule =
      options.slot && state.schedule
        ? { schedule: { ...state.schedule, last_slot: options.slot } }
        : {}
    const first = {
      sessionId: loopWorkFolder(loopId),
      idempotencyKey: runStepKey(run.run_id, state.step_index),
    }
    try {
      return await admit(first, async () => {
        // Before the run exists: a crash between saving it and recording its step is found by
        // the sweep through this entry (loop-run-revival.ts).
        await store.addRunEntry(tenant, loopId, now)
        const saved = await store.save(loop, { ...state, run, ...schedule, updated_at: now })
        // A pass that read the loop before the save may have removed the entry since (it checks
        // the other way after its delete: LoopStore.removeEntryRechecked).
        await store.keepEntry('loop-runs', tenant, loopId, now)
        const work = await recordRunStep(deps, queue, tenant, saved.state)
        return { loop: loopView(saved.state), work, duplicate: false }
      })
    } catch (error) {
      if (!isTurnlineError(error, 'conflict') || attempt >= ATTEMPTS) throw error
    }
  }
}

function assertStartable(state: LoopRunState): void {
  if (state.status === 'running') return
  const hint = state.status === 'paused' ? ': POST {"control":"resume"} first' : ''
  throw new TurnlineError('conflict', `loop ${state.loop_id} is ${state.status}${hint}`, {
    retryable: false,
    details: { status: state.status },
  })
}

/** The record of the step a running run is at (create-only: the same key finds it). */
export async function recordRunStep(
  deps: ServiceDeps,
  queue: WorkQueue,
  tenant: string,
  state: LoopRunState,
) {
  const run = state.run
  if (!run) throw new Error('unreachable: a loop run without a run')
  return queueWork(deps, queue, {
    tenant,
    sessionId: loopWorkFolder(state.loop_id),
    idempotencyKey: runStepKey(run.run_id, state.step_index),
    request: {},
    source: 'loops',
    loopStep: { loop_id: state.loop_id, step_index: state.step_index, run_id: run.run_id },
  })
}

/** A run step's work as its record names it, without writing it. */
async function runStepWork(loopId: string, runId: string, stepIndex: number) {
  const key = runStepKey(runId, stepIndex)
  const work_id = await workIdOf(key)
  return { work_id, session_id: loopWorkFolder(loopId), idempotency_key: key, duplicate: true }
}

/** What one run step came to, for the worker: the status and the next record to wake. */
export interface RunStepResult {
  status: TurnStatus
  next?: WorkLocation
}

/** Runs a run's step (unless the run stopped meanwhile), then records the next or stops. */
export async function runLoopRunStep(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  record: WorkRecord,
  started: () => void,
): Promise<RunStepResult> {
  const loopId = record.loop_id ?? ''
  const store = new LoopStore(deps.sessions)
  const before = await store.load(record.tenant, loopId)
  if (!isCurrent(before.state, record)) return { status: 'completed' }
  if (before.state.status !== 'running') {
    await stopLoopRun(deps, record, stopOf(before.state))
    return { status: 'completed' }
  }
  started()
  let waiting: string | undefined
  try {
    const step = await stepLoop(
      deps,
      locator,
      record.tenant,
      loopId,
      {},
      {
        ...(record.step_index === undefined ? {} : { step: record.step_index }),
      },
    )
    waiting = step.waiting?.status
  } catch (error) {
    if (!isTurnlineError(error, 'conflict') || error.details?.reason !== 'verification_required') {
      throw error
    }
    await stopLoopRun(deps, record, { reason: 'verification', message: error.message })
    return { status: 'waiting' }
  }
  const after = await store.load(record.tenant, loopId)
  if (waiting) {
    const message = `step ${after.state.current_step?.session_id ?? ''} is ${waiting}: answer it, then POST /v1/loops/${loopId}/run to go on`
    await stopLoopRun(deps, record, { reason: 'waiting', message })
    return { status: 'waiting' }
  }
  if (!isCurrent(after.state, record)) return { status: 'completed' }
  if (after.state.status !== 'running') {
    await stopLoopRun(deps, record, stopOf(after.state))
    return { status: 'completed' }
  }
  if (after.state.step_index <= (record.step_index ?? 0)) {
    await stopLoopRun(deps, record, { reason: 'error', message: 'the step did not advance' })
    return { status: 'failed' }
  }
  const next = await recordRunStep(deps, queue, record.tenant, after.state)
  return {
    status: 'completed',
    next: { tenant: record.tenant, session_id: next.session_id, work_id: next.work_id },
  }
}

/** The record belongs to the loop's running run. */
function isCurrent(state: LoopRunState, record: WorkRecord): boolean {
  return state.run?.run_id === record.run_id && state.run?.state === 'running'
}

/** Why a loop that stopped running stops its run. */
function stopOf(state: LoopRunState): { reason: LoopRunStopReason; message: string } {
  if (state.status === 'paused' && state.budget_status !== 'ok') {
    return { reason: 'budget', message: `the loop reached its budget (${state.budget_status})` }
  }
  const reason = state.status === 'running' ? 'error' : state.status
  return { reason, message: `the loop is ${state.status}` }
}

/**
 * Marks the run stopped (when it is still the running one) after recording its `loop.stopped`
 * notice, so a crash between the two records the same notice again, never none.
 */
export async function stopLoopRun(
  deps: ServiceDeps,
  record: Pick<WorkRecord, 'tenant' | 'loop_id' | 'run_id'>,
  stop: { reason: LoopRunStopReason; message: string },
): Promise<void> {
  const store = new LoopStore(deps.sessions)
  for (let attempt = 0; ; attempt++) {
    const loop: StoredLoop = await store.load(record.tenant, record.loop_id ?? '')
    const run = loop.state.run
    if (!run || run.run_id !== record.run_id || run.state !== 'running') return
    const now = iso(deps)
    const stopped: LoopRun = {
      ...run,
      state: 'stopped',
      stopped_at: now,
      stop_reason: stop.reason,
      message: stop.message.slice(0, 2000),
    }
    const next = { ...loop.state, run: stopped, updated_at: now }
    await recordLoopStopped(deps, record.tenant, next)
    try {
      await store.save(loop, next)
      return
    } catch (error) {
      if (!isTurnlineError(error, 'conflict') || attempt >= ATTEMPTS) throw error
    }
  }
}

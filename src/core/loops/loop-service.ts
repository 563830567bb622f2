import { TurnlineError } from '../../contract/errors.ts'
import type {
  LoopCreateInput,
  LoopRunState,
  LoopStepRecord,
  LoopStepRequest,
  LoopStepResponse,
  LoopView,
} from '../../contract/loop-state.ts'
import { LOOP_STATE_VERSION, readLoopCreateRequest } from '../../contract/loop-state.ts'
import { appendingStore } from '../../store/events-file-state.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import { allMilestonesDone, newLedger, noteAdvance, noteStall } from '../artifacts/progress.ts'
import { artifactStoreFor } from '../artifacts/workspace-artifacts.ts'
import { type PlaceRequest, withPlace } from '../engine/place-admission.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { parseConfig } from '../session/create-session.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import { accountStep, loopReport, loopView, stepArtifactPath } from './loop-accounting.ts'
import { runLoopStep } from './loop-step.ts'
import { LoopStore, type StoredLoop } from './loop-store.ts'

/**
 * `POST /v1/loops`, `GET /v1/loops/:id`, `POST /v1/loops/:id/step`: a loop run whose state is
 * only in object storage, so any process resumes it by id with the same step index and cost.
 * A step is claimed (CAS) before it runs and accounted (CAS) after, exactly once; the budget is
 * checked before each step and a reached limit pauses the loop with its BudgetStatus.
 */

const iso = (deps: ServiceDeps) => new Date(deps.clock.now()).toISOString()

/** A new loop's id, where the request names none. */
export function newLoopId(deps: Pick<ServiceDeps, 'ids'>): string {
  return `loop-${deps.ids.token().slice(0, 16)}`
}

export async function createLoop(
  deps: ServiceDeps,
  tenant: string,
  body: LoopCreateInput,
): Promise<LoopView> {
  const request = readLoopCreateRequest(body)
  const session = parseConfig(request.session)
  const loopId = request.loop_id ?? newLoopId(deps)
  const now = iso(deps)
  const state: LoopRunState = {
    schema_version: LOOP_STATE_VERSION,
    loop_id: loopId,
    step_index: 0,
    last_artifact_path: null,
    status: 'running',
    started_at: now,
    updated_at: now,
    workspace: session.workspace,
    task: request.task,
    session,
    budget: request.budget,
    budget_status: 'ok',
    cumulative: { input_tokens: 0, output_tokens: 0, total_cost_usd: 0, cost_unknown: false },
    current_step: null,
    last_session_id: null,
    steps: [],
    ...(request.schedule ? { schedule: { cron: request.schedule.cron } } : {}),
  }
  const store = new LoopStore(deps.sessions)
  const write = async () => {
    // The schedule's entry first: a loop created after it is found; an entry without one is dropped.
    if (request.schedule) await store.addScheduleEntry(tenant, loopId, now)
    await store.create(tenant, state)
    // A pass that found no loop before it was created may have removed the entry since (it
    // checks the other way after its delete: LoopStore.removeEntryRechecked).
    if (request.schedule) await store.keepEntry('schedules', tenant, loopId, now)
  }
  const max = deps.defaults.tenantCaps?.scheduledLoops
  if (request.schedule && max !== undefined) {
    await withPlace(scheduleRoom(deps, store, tenant, loopId, max), write)
  } else {
    await write()
  }
  return loopView(state)
}

/**
 * A tenant has at most TURNLINE_MAX_SCHEDULED_LOOPS scheduled loops (every schedule pass checks
 * each), counted exactly however many are created at once (withPlace): a new one past them is
 * 409 `conflict` naming the limit, nothing written. A loop completed or failed gives up its
 * place when it is saved so, a deleted workspace's loops theirs when it is deleted.
 */
function scheduleRoom(
  deps: ServiceDeps,
  store: LoopStore,
  tenant: string,
  loopId: string,
  max: number,
): PlaceRequest {
  return {
    book: deps.coordinator,
    scope: `scheduled-loops/${tenant}`,
    max,
    stored: (upTo) => store.scheduledLoopIds(tenant, upTo),
    id: loopId,
    holder: deps.ids.token(),
    refused: () =>
      new TurnlineError(
        'conflict',
        `too many scheduled loops: a tenant may have ${max} (TURNLINE_MAX_SCHEDULED_LOOPS); ` +
          'complete, fail or delete one, or create this loop without a schedule',
        {
          retryable: false,
          details: { reason: 'scheduled_loops', limit: 'TURNLINE_MAX_SCHEDULED_LOOPS', max },
        },
      ),
  }
}

export async function getLoop(
  deps: ServiceDeps,
  tenant: string,
  loopId: string,
): Promise<LoopView> {
  return loopView((await new LoopStore(deps.sessions).load(tenant, loopId)).state)
}

export async function stepLoop(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  loopId: string,
  request: LoopStepRequest,
  /** `step`: run only that step (a background step, recorded when it was next): once it ran, nothing. */
  only: { step?: number } = {},
  /** The platform's bound on the request running the step in it: its turn pauses before it. */
  turn: { timeLeft?: InvocationTimeLeft } = {},
): Promise<LoopStepResponse> {
  const store = new LoopStore(deps.sessions)
  let loop = await store.load(tenant, loopId)
  if (only.step !== undefined && loop.state.step_index > only.step) {
    return { loop: loopView(loop.state) }
  }
  if (request.control || request.budget) {
    loop = await store.save(loop, control(loop.state, request, iso(deps)))
    if (request.control) return { loop: loopView(loop.state) }
  }
  const { state } = loop
  assertRunnable(state, loopId)
  let claim = state.current_step
  if (!claim) {
    const status = loopReport(state).status
    if (status !== 'ok') {
      const paused = {
        ...state,
        status: 'paused' as const,
        budget_status: status,
        updated_at: iso(deps),
      }
      return { loop: loopView((await store.save(loop, paused)).state) }
    }
    claim = {
      index: state.step_index,
      session_id: `${loopId}-step-${state.step_index}`,
      started_at: iso(deps),
    }
    loop = await store.save(loop, { ...state, current_step: claim, updated_at: claim.started_at })
  }
  const outcome = await runLoopStep({
    deps,
    locator,
    tenant,
    state: loop.state,
    claim,
    input: request.input,
    ...(turn.timeLeft ? { timeLeft: turn.timeLeft } : {}),
  })
  if (outcome.kind === 'waiting') {
    const { status, warnings } = outcome
    return {
      loop: loopView(loop.state),
      waiting: { session_id: claim.session_id, status, ...(warnings ? { warnings } : {}) },
    }
  }
  loop = await account(deps, store, tenant, loopId, loop, outcome.record)
  return { loop: loopView(loop.state), step: outcome.record }
}

/** A completed, failed or paused loop runs no step (409). */
function assertRunnable(state: LoopRunState, loopId: string): void {
  if (state.status === 'completed' || state.status === 'failed') {
    throw new TurnlineError('conflict', `loop ${loopId} is ${state.status}`, { retryable: false })
  }
  if (state.status === 'paused') {
    throw new TurnlineError(
      'conflict',
      `loop ${loopId} is paused (${state.budget_status}): POST {"control":"resume"} (with a larger budget when a limit was reached)`,
      { retryable: false },
    )
  }
}

function control(state: LoopRunState, request: LoopStepRequest, now: string): LoopRunState {
  const budget = { ...state.budget, ...request.budget }
  const next: LoopRunState = { ...state, budget, updated_at: now }
  const status = loopReport(next).status
  switch (request.control) {
    case 'pause':
      return { ...next, status: 'paused' }
    case 'complete':
      return { ...next, status: 'completed' }
    case 'fail':
      return { ...next, status: 'failed' }
    case 'resume':
      if (state.status === 'completed' || state.status === 'failed') {
        throw new TurnlineError('conflict', `loop ${state.loop_id} is ${state.status}`, {
          retryable: false,
        })
      }
      return { ...next, status: status === 'ok' ? 'running' : 'paused', budget_status: status }
    default:
      return { ...next, budget_status: status }
  }
}

/** Folds the step in (retrying a lost CAS against the newer state), then the ledger. */
async function account(
  deps: ServiceDeps,
  store: LoopStore,
  tenant: string,
  loopId: string,
  loop: StoredLoop,
  record: LoopStepRecord,
): Promise<StoredLoop> {
  let current = loop
  const appends = appendingStore(deps.sessions.objects) !== undefined
  const artifactPath = stepArtifactPath(record.session_id, { appends })
  for (let attempt = 0; ; attempt++) {
    const next = accountStep(current.state, record, iso(deps), artifactPath)
    if (next === current.state) return current
    try {
      current = await store.save(current, next)
      break
    } catch (error) {
      if (attempt >= 4) throw error
      current = await store.load(tenant, loopId)
    }
  }
  const done = await noteStep(deps, tenant, current.state, record)
  if (done && current.state.status === 'running') {
    current = await store.save(current, {
      ...current.state,
      status: 'completed',
      updated_at: iso(deps),
    })
  }
  return current
}

/** The ledger's signal: a successful step advances, any other stalls. True when all is done. */
async function noteStep(
  deps: ServiceDeps,
  tenant: string,
  state: LoopRunState,
  record: LoopStepRecord,
): Promise<boolean> {
  const now = iso(deps)
  const ledger = await artifactStoreFor(deps, tenant, state.workspace).updateLedger((current) => {
    const base = current ?? newLedger(record.session_id, state.task.slice(0, 4000), now)
    return record.subtype === 'success'
      ? noteAdvance(base, record.session_id, now)
      : noteStall(base, record.session_id, now)
  })
  return ledger ? allMilestonesDone(ledger) : false
}

import type { TurnRequest } from '../../contract/api.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { LoopCreateInput } from '../../contract/loop-state.ts'
import type { ResponseRunRequest } from '../../contract/open-responses-run.ts'
import type { SessionConfigInput } from '../../contract/session-config.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { TurnInput } from '../../contract/turn-input.ts'
import { loopWorkFolder, type WorkLocation } from '../../contract/work-record.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import { WorkQueue } from '../../store/work-queue.ts'
import { AgentLayerService } from '../agent-layer/agent-layer-service.ts'
import type { AdmittedStep } from '../engine/admit-step.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { getLoop, newLoopId } from '../loops/loop-service.ts'
import { deliveryKey, deliverySession } from '../session/automation-run.ts'
import { newSessionId, parseConfig } from '../session/create-session.ts'
import { execRunEnd } from '../session/exec-run-end.ts'
import type { TurnOptions } from '../session-api.ts'
import { announcingStart } from '../turn/announced-start.ts'
import { stepTurn } from '../turn/step-turn.ts'
import type { BackgroundApi, LoopRunStarted, QueuedTrigger, QueuedWork } from './background-api.ts'
import { ranExec, startExecSession } from './exec-session.ts'
import { reviveLoopRuns } from './loop-run-revival.ts'
import { fireDueSchedules } from './loop-schedules.ts'
import { withPendingPlace } from './pending-room.ts'
import { queueResponse, ranResponse, responseRecord } from './queue-response.ts'
import { queueTurn } from './queue-turn.ts'
import { execSessionIdOf, queueWork, serverKey, workIdOf } from './queue-work.ts'
import { newRunId, runStepKey, startLoopRun } from './run-loop.ts'
import { runWork } from './run-work.ts'
import { loopWorkStatus, workStatus } from './work-status.ts'

/**
 * The background side of SessionService (which extends it): recording, running, status. What a
 * request would add to the queue takes a place under its tenant's TURNLINE_MAX_PENDING_WORK
 * while it is recorded, or is refused (withPendingPlace); what the deployment records on its
 * own is not.
 */
export class BackgroundService extends AgentLayerService implements BackgroundApi {
  protected readonly work: WorkQueue

  constructor(deps: ServiceDeps, locator: SessionLocator, prefix: string) {
    super(deps, locator)
    this.work = new WorkQueue(deps.sessions.objects, prefix)
  }

  queueTurn(
    tenant: string,
    sessionId: string,
    request: TurnRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<QueuedWork> {
    const at = { tenant, sessionId }
    return queueTurn(this.deps, this.locator, this.work, at, request, options.idempotencyKey)
  }

  /**
   * The session of a background exec run ends with its turn (as an automation run's). With an
   * Idempotency-Key its id derives from the key (`ex-…`), so a retry finds it and its record.
   */
  async queueExec(
    tenant: string,
    body: SessionConfigInput & { prompt: TurnInput },
    options: { idempotencyKey?: string } = {},
  ): Promise<QueuedWork> {
    const { prompt, ...config } = body
    if (prompt === undefined || prompt.length === 0) {
      throw new TurnlineError('invalid_input', 'prompt is required', {
        details: { field: 'prompt' },
      })
    }
    const key = options.idempotencyKey
    // Both named before (a fresh session without a key), so the record's place is held by name.
    const idempotencyKey = key ?? serverKey(this.deps)
    const sessionId =
      key === undefined
        ? newSessionId(this.deps.clock.now(), this.deps.ids.token())
        : await execSessionIdOf(key)
    const write = async () => {
      const started = { sessionId, keyed: key !== undefined }
      const { existed } = await startExecSession(this.deps, this.locator, tenant, config, started)
      const queued = await queueWork(this.deps, this.work, {
        tenant,
        sessionId,
        idempotencyKey,
        request: { input: prompt },
        source: 'exec',
      })
      return { ...queued, duplicate: queued.duplicate || existed }
    }
    const run = { tenant, sessionId, idempotencyKey, request: { input: prompt } }
    const earlier =
      key === undefined
        ? undefined
        : () => ranExec(this.deps, this.locator, { ...run, key, config: parseConfig(config) })
    return withPendingPlace(this.deps, this.work, tenant, write, run, earlier)
  }

  /**
   * A webhook delivery: duplicate when its session or its record existed already. A redelivery
   * whose session stands is known before the pending cap is asked, and never refused by it.
   */
  async queueTrigger(tenant: string, request: QueuedTrigger): Promise<QueuedWork> {
    const queue = async () => {
      const created = await deliverySession(this.deps, this.locator, tenant, request)
      const queued = await queueWork(this.deps, this.work, {
        tenant,
        sessionId: request.sessionId,
        idempotencyKey: await deliveryKey(request.deliveryId),
        request: { input: request.input },
        source: 'webhook',
      })
      return { ...queued, duplicate: queued.duplicate || !created }
    }
    if (await redelivered(this.locator, tenant, request)) return queue()
    const record = {
      sessionId: request.sessionId,
      idempotencyKey: await deliveryKey(request.deliveryId),
    }
    return withPendingPlace(this.deps, this.work, tenant, queue, record)
  }

  async queueLoopStep(
    tenant: string,
    loopId: string,
    request: { input?: string },
    options: { idempotencyKey?: string } = {},
  ): Promise<QueuedWork> {
    const loop = await getLoop(this.deps, tenant, loopId)
    if (loop.status === 'completed' || loop.status === 'failed') {
      throw new TurnlineError('conflict', `loop ${loopId} is ${loop.status}`, { retryable: false })
    }
    const sessionId = loopWorkFolder(loopId)
    const key = options.idempotencyKey
    if (key !== undefined) {
      // A retry after its step ran: the same answer, no record (it would run the next step).
      const work_id = await workIdOf(key)
      if (await this.work.isDone({ tenant, session_id: sessionId, work_id })) {
        return { work_id, session_id: sessionId, idempotency_key: key, duplicate: true }
      }
    }
    const idempotencyKey = key ?? serverKey(this.deps)
    const write = () =>
      queueWork(this.deps, this.work, {
        tenant,
        sessionId,
        idempotencyKey,
        request: request.input === undefined ? {} : { input: request.input },
        source: 'loops',
        loopStep: { loop_id: loopId, step_index: loop.step_index },
      })
    return withPendingPlace(this.deps, this.work, tenant, write, { sessionId, idempotencyKey })
  }

  async runLoop(
    tenant: string,
    loopId: string,
    options: { trigger: 'api' | 'autorun'; idempotencyKey?: string },
  ) {
    // A run running, or the key's, is answered before any place is asked (a retry is never 429).
    return startLoopRun(this.deps, this.work, tenant, loopId, options, (record, start) =>
      withPendingPlace(this.deps, this.work, tenant, start, record),
    )
  }

  /**
   * A loop created with `autorun`: its run is background work, so the loop is created and its
   * run started under one pending place, held from before the loop is written (both ids chosen
   * before, the hold named by the run's first record): refused, nothing is created.
   */
  async createRunningLoop(tenant: string, request: LoopCreateInput): Promise<LoopRunStarted> {
    const loopId = request.loop_id ?? newLoopId(this.deps)
    const runId = newRunId(this.deps)
    const first = { sessionId: loopWorkFolder(loopId), idempotencyKey: runStepKey(runId, 0) }
    const createAndStart = async () => {
      await this.createLoop(tenant, { ...request, loop_id: loopId })
      const run = { trigger: 'autorun' as const, runId }
      return startLoopRun(this.deps, this.work, tenant, loopId, run)
    }
    return withPendingPlace(this.deps, this.work, tenant, createAndStart, first)
  }

  /** The sweep's first step: due loop schedules, then loop runs whose step record was lost. */
  async fireSchedules() {
    const log = serviceLog(this.deps)
    const fired = await fireDueSchedules(this.deps, this.work, log)
    const revived = await reviveLoopRuns(this.deps, this.work, log)
    return { ...fired, started: [...fired.started, ...revived] }
  }

  async queueResponse(tenant: string, request: ResponseRunRequest) {
    const record = await responseRecord(this.deps, request)
    const keyed = { ...request, idempotencyKey: record.idempotencyKey }
    const write = () => queueResponse(this.deps, this.locator, this.work, tenant, keyed)
    if (request.idempotencyKey === undefined) {
      return withPendingPlace(this.deps, this.work, tenant, write, record)
    }
    // A retry of a response that ran or runs: its duplicate, recorded again nowhere, capped or
    // not (`earlier`: one that ended while this request was on its way, at the cap).
    const earlier = () => ranResponse(this.deps, this.locator, tenant, keyed, record.sessionId)
    return (
      (await earlier()) ?? withPendingPlace(this.deps, this.work, tenant, write, record, earlier)
    )
  }

  runWork(at: WorkLocation) {
    return runWork(this.deps, this.locator, this.work, at)
  }

  listWork(after?: string) {
    return this.work.list(after)
  }

  workStatus(tenant: string, sessionId: string, workId: string) {
    return workStatus(this.deps, this.locator, this.work, { tenant, sessionId, workId })
  }

  loopWorkStatus(tenant: string, loopId: string, workId: string) {
    return loopWorkStatus(this.work, { tenant, loopId, workId })
  }

  /**
   * An exec run with an Idempotency-Key: its session derives from the key (as a background
   * run's) and ends with its turn, so a retry finds both and answers the turn's first outcome
   * without running anything again (the key with another prompt is 422).
   */
  protected async keyedExec(
    tenant: string,
    run: { config: SessionConfigInput; prompt: TurnInput; key: string },
    options: TurnOptions,
    admitted: AdmittedStep,
  ) {
    const session = {
      sessionId: await execSessionIdOf(run.key),
      keyed: true,
      timeLeft: options.timeLeft,
    }
    const { deps, locator } = this
    const { sessionId } = await startExecSession(deps, locator, tenant, run.config, session)
    const started: ThreadEvent = { type: 'thread.started', thread_id: sessionId }
    const ref = await this.locator.locate(tenant, sessionId)
    // Announced with the turn's first event: a key refused before it is a plain error answer.
    const turnOptions = announcingStart(options, started)
    const turn = await stepTurn(this.deps, ref, { input: run.prompt }, turnOptions, admitted)
    // As a run without a key ends: the same check before its session is completed.
    const end = await execRunEnd(this.deps, ref, turn, options)
    const events = [started, ...turn.events, ...end.events]
    return { session_id: sessionId, events, ...(end.open ? { open: end.open } : {}) }
  }
}

/**
 * A delivery the route's replay guard saw before whose session stands: a redelivery, answered
 * as a duplicate whatever the tenant's pending work (a run it recorded, or one it finishes).
 */
async function redelivered(locator: SessionLocator, tenant: string, request: QueuedTrigger) {
  if (request.earlier === undefined) return false
  if (request.earlier === 'recorded') return true
  locator.forget(tenant, [request.sessionId])
  try {
    await locator.locate(tenant, request.sessionId)
    return true
  } catch (error) {
    if (isTurnlineError(error, 'not_found')) return false
    throw error
  }
}

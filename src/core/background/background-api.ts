import type { TurnRequest, TurnStatus } from '../../contract/api.ts'
import type { LoopCreateInput, LoopView } from '../../contract/loop-state.ts'
import type { ResponseRunRequest } from '../../contract/open-responses-run.ts'
import type { SessionConfigInput } from '../../contract/session-config.ts'
import type { TurnInput } from '../../contract/turn-input.ts'
import type { WorkError, WorkLocation } from '../../contract/work-record.ts'
import type { EarlierDelivery } from '../session/earlier-delivery.ts'

/** A background turn accepted (202): where it is recorded and how to find it again. */
export interface QueuedWork {
  work_id: string
  session_id: string
  /** The turn's key: the caller's Idempotency-Key, or the one the server made for it. */
  idempotency_key: string
  /** The same work was recorded before (a retried request, a redelivered webhook). */
  duplicate: boolean
}

/** What one run of a pending record came to (the worker decides what to do next from it). */
export type WorkRunOutcome =
  /** The turn has an outcome (committed); the record is deleted. `next`: a loop run's next step. */
  | { outcome: 'done'; status: TurnStatus; next?: WorkLocation }
  /** Another turn holds the session: the record stays, to be tried after `retryAfterMs`. */
  | { outcome: 'busy'; retryAfterMs: number }
  /** A fault worth retrying: counted on the record, which stays. */
  | { outcome: 'retry'; error: WorkError }
  /** Refused, or too many faults: the record keeps the error and is not run again. */
  | { outcome: 'failed'; error: WorkError }
  /** Nothing to run: the record is gone (run elsewhere) or failed before. */
  | { outcome: 'gone' }

/** A loop run started, or the one running (`duplicate`): the loop, and its step's record. */
export interface LoopRunStarted {
  loop: LoopView
  work: QueuedWork
  duplicate: boolean
}

/** What `GET /v1/sessions/{id}/work/{work_id}` answers. */
export interface WorkStatus {
  work_id: string
  session_id: string
  /**
   * `queued`: recorded, not started; `running`: its turn is open (running, or left by a crash
   * and waiting for a worker to take it over); `done`: its turn has an outcome (`turn`);
   * `failed`: it cannot run (`error`); `waiting`: refused for the tenant's daily quota, it
   * stays pending and is tried again at `waiting.retry_at` (docs/limits.md).
   */
  state: 'queued' | 'waiting' | 'running' | 'done' | 'failed'
  turn?: { turn_id: string; status?: TurnStatus }
  attempts?: number
  last_error?: WorkError
  error?: WorkError
  waiting?: {
    reason: 'quota_exceeded'
    message: string
    since: string
    retry_at: string
    refusals: number
  }
}

/** An automation run recorded for the background (a verified webhook delivery). */
export interface QueuedTrigger {
  sessionId: string
  deliveryId: string
  config: SessionConfigInput
  input: string
  /** The same delivery id was accepted before: how far it got (deliverySession). */
  earlier?: EarlierDelivery
  /** Called once its session stands, before its turn is recorded (deliverySession). */
  sessionStands?: () => Promise<void>
}

/**
 * Background turns (docs/http-api.md#background-turns): each is recorded in the session store
 * before it is accepted, and run by a worker (functions/background/) that may be in another
 * process. Tenant-scoped like the rest of SessionApi, except the worker's calls, which name the
 * record.
 */
export interface BackgroundApi {
  /** Records a turn of an existing session; 409 session_completed for an ended one. */
  queueTurn(
    tenant: string,
    sessionId: string,
    request: TurnRequest,
    options?: { idempotencyKey?: string },
  ): Promise<QueuedWork>
  /** An exec run: its session is created now (ending with its turn), the turn recorded. */
  queueExec(
    tenant: string,
    body: SessionConfigInput & { prompt: TurnInput },
    options?: { idempotencyKey?: string },
  ): Promise<QueuedWork>
  /** A webhook's automation run: its session and its turn recorded, once per delivery id. */
  queueTrigger(tenant: string, request: QueuedTrigger): Promise<QueuedWork>
  /**
   * A loop's next step (the one next now: once it ran, the record does nothing), with `input`
   * added to the task for that step; 409 for a completed or failed loop.
   */
  queueLoopStep(
    tenant: string,
    loopId: string,
    request: { input?: string },
    options?: { idempotencyKey?: string },
  ): Promise<QueuedWork>
  /**
   * Starts a loop run (or answers the one running, and records its step again if a crash lost
   * it): a worker steps the loop until it completes, fails, pauses, reaches its budget or needs
   * a person. 409 for a completed, failed or paused loop.
   */
  runLoop(
    tenant: string,
    loopId: string,
    options: { trigger: 'api' | 'autorun'; idempotencyKey?: string },
  ): Promise<LoopRunStarted>
  /**
   * Creates a loop and starts its run (`autorun`), under one pending place: refused by the cap,
   * nothing is created.
   */
  createRunningLoop(tenant: string, request: LoopCreateInput): Promise<LoopRunStarted>
  /**
   * Starts the runs of every loop schedule that is due, and records the step of a loop run whose
   * step record a crash lost (the sweep's call, on every runtime).
   */
  fireSchedules(): Promise<{ started: WorkLocation[]; skipped: number }>
  /**
   * A background response (`POST /v1/responses` with `background: true`): its session created,
   * its turn recorded for the worker.
   */
  queueResponse(tenant: string, request: ResponseRunRequest): Promise<QueuedWork>
  /** Runs one pending record through the turn engine (the worker's call). */
  runWork(at: WorkLocation): Promise<WorkRunOutcome>
  /** One page of every pending record of the deployment (the sweep's call). */
  listWork(after?: string): Promise<{ items: WorkLocation[]; next?: string }>
  workStatus(tenant: string, sessionId: string, workId: string): Promise<WorkStatus>
  /** A loop step's record: queued, running or failed; 404 once it ran (the loop shows it). */
  loopWorkStatus(tenant: string, loopId: string, workId: string): Promise<WorkStatus>
}

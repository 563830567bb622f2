import type {
  CreateSessionResponse,
  IntentRequest,
  IntentResponse,
  ListedSession,
  ListSessionsQuery,
  SessionView,
  TurnRequest,
  TurnResponse,
  TurnStatus,
  TurnsQuery,
} from '../contract/api.ts'
import type { DeliveryList } from '../contract/callback-delivery.ts'
import type {
  CompactResource,
  ResponsesCompactRequest,
} from '../contract/open-responses-compaction.ts'
import type { ListedInputItem } from '../contract/open-responses-input-items.ts'
import type { ResponseRunRequest, ResponseRunResult } from '../contract/open-responses-run.ts'
import type { PermissionResolutionRequest } from '../contract/permission-resolution.ts'
import type { PlanApprovalRequest } from '../contract/plan-approval.ts'
import type { ForkRequest } from '../contract/route-bodies.ts'
import type { SessionConfigInput } from '../contract/session-config.ts'
import type { ThreadEvent } from '../contract/thread-event.ts'
import type { TurnInput } from '../contract/turn-input.ts'
import type { LeftOpen } from '../contract/turn-left-open.ts'
import type { Usage } from '../contract/usage.ts'
import type { EventPage } from '../store/read-events.ts'
import type { TurnPage } from '../store/turn-inputs.ts'
import type { AgentLayerApi } from './agent-layer/agent-layer-api.ts'
import type { BackgroundApi } from './background/background-api.ts'

export type {
  LoopRunStarted,
  QueuedWork,
  WorkRunOutcome,
  WorkStatus,
} from './background/background-api.ts'
/** Completion callbacks: what the entries wire (the outbox, the policy, Node's delivery loop). */
export { CallbackOutbox } from './callbacks/callback-outbox.ts'
export { type CallbackPolicy, callbackUrlProblem } from './callbacks/callback-policy.ts'
export { sweepCallbacks } from './callbacks/callback-sweep.ts'
export { CallbackWorker } from './callbacks/callback-worker.ts'

/**
 * Called for every event of a running turn, in commit order, before it is committed. `line` is
 * its canonical `events.jsonl` line as serialized when it was dispatched (what the commit
 * writes), when the caller has it: live streams splice its event text instead of serializing
 * the event again.
 */
export type EventListener = (event: ThreadEvent, seq: number, line?: string) => void

/** `POST …/compact`: the turn options plus instructions for the summary. */
export type CompactOptions = TurnOptions & { instructions?: string }

export interface TurnOptions {
  idempotencyKey?: string
  /** Live events (SSE). The same events are in the response once committed. */
  onEvent?: EventListener
  /** Called after each model request of the turn loop (operator metrics: model calls per turn). */
  onModelCall?: () => void
  signal?: AbortSignal
  /**
   * How long the platform still lets this request run (Lambda's remaining time): a turn run in
   * the request pauses, open, before it runs out (turn/invocation-deadline.ts).
   */
  timeLeft?: () => number | undefined
}

/** An exec run seen as an Open Responses stream (`POST /v1/responses`), built event by event. */
export interface OpenResponsesView {
  /** The SSE frames of the Open Responses events this ThreadEvent maps to (often none). */
  frames(event: ThreadEvent): string
  /** The same events one by one: each one's `sequence_number`, SSE frame and object. */
  events(event: ThreadEvent): ViewEvent[]
  /** The response object as it stands; undefined before the first event. */
  readonly response: object | undefined
  /** The stream's terminal frame, `data: [DONE]`. */
  readonly done: string
  /**
   * The frames that end a response whose turn waits on the client's function calls: the calls
   * done, then `response.completed` with the turn's usage so far.
   */
  awaitClient(usage?: Usage): string
  /** The same events one by one. */
  awaitClientEvents(usage?: Usage): ViewEvent[]
  /**
   * The frames that end a response whose turn stayed open: on the client's function calls as
   * `awaitClient`; otherwise paused (before the platform's timeout, or for the quota), its
   * response `incomplete` with `incomplete_details.reason` `paused` (nothing for an ended turn).
   */
  ending(result: OpenEnd): string
  /** The same events one by one. */
  endingEvents(result: OpenEnd): ViewEvent[]
}

/** How a response's turn ended, as far as its view's last frames are concerned. */
export type OpenEnd = Pick<
  ResponseRunResult,
  'status' | 'usage' | 'waitingOnClient' | 'reasoning_tokens'
>

/** One Open Responses event of a view: its number, its SSE frame, the event itself. */
export interface ViewEvent {
  sequence: number
  frame: string
  /** The event object (a WebSocket message is its JSON). */
  event: { type: string; sequence_number: number }
}

/**
 * A stored response's view: whether its turn waits on the client's function calls (the
 * response then ended with them) and that turn's usage so far.
 */
export type StoredResponseView = OpenResponsesView & {
  waitingOnClient: boolean
  waitUsage?: Usage
  /**
   * Reads the response's reasoning tokens again (its session's state), before the events of its
   * end are given: a view opened while the response still ran read them before they were all
   * counted. Nothing to read when the view was opened on an ended session.
   */
  reloadReasoning(): Promise<void>
  /** A background response: the work that runs its turn. */
  workId?: string
}

/** How a response is shown: with Turnline's `vtcode:*` items and events, or without (default). */
export interface ResponseViewOptions {
  extensions?: boolean
}

/**
 * What the HTTP layer calls. Every method is tenant-scoped: another tenant's session is
 * TurnlineError('not_found'), never 'unauthorized'. Faults are TurnlineErrors with codes.
 */
export interface SessionApi extends AgentLayerApi, BackgroundApi {
  /** `timeLeft`: the platform's bound on the request (Lambda): its start hooks stop before it. */
  createSession(
    tenant: string,
    body: SessionConfigInput,
    options?: Pick<TurnOptions, 'timeLeft'>,
  ): Promise<CreateSessionResponse>
  listSessions(
    tenant: string,
    query: ListSessionsQuery,
  ): Promise<{ sessions: ListedSession[]; cursor?: string }>
  /** The tenant's workspaces, each with its number of sessions, in name order. */
  listWorkspaces(tenant: string): Promise<{ workspaces: { workspace: string; sessions: number }[] }>
  getSession(tenant: string, sessionId: string): Promise<SessionView>
  /** Steps one turn: 409 session_busy / session_completed as TurnlineErrors. */
  stepTurn(
    tenant: string,
    sessionId: string,
    request: TurnRequest,
    options?: TurnOptions,
  ): Promise<TurnResponse>
  /** Ends the session with success (result = last assistant text). */
  complete(tenant: string, sessionId: string, options?: TurnOptions): Promise<TurnResponse>
  /** Ends the session as cancelled. */
  cancel(tenant: string, sessionId: string, options?: TurnOptions): Promise<TurnResponse>
  /** Erases the session (session/delete-session.ts); 409 session_busy while a turn runs. */
  /** Erases every session and object of a workspace (docs/http-api.md#deleting-a-workspace). */
  deleteWorkspace(tenant: string, workspace: string): Promise<void>
  deleteSession(tenant: string, sessionId: string): Promise<void>
  /** The session's completion-callback deliveries with their attempts (callbacks/). */
  listDeliveries(tenant: string, sessionId: string): Promise<DeliveryList>
  /** A loop's own deliveries: `loop.stopped` of runs stopped before any step had a session. */
  listLoopDeliveries(tenant: string, loopId: string): Promise<DeliveryList>
  /**
   * Queues a steering follow-up, also while a turn runs; the next turn boundary applies it.
   * At most 16 pending: the 17th is TurnlineError('follow_up_queue_full'), nothing dropped.
   */
  enqueueIntent(tenant: string, sessionId: string, request: IntentRequest): Promise<IntentResponse>
  /**
   * Records the decision on the tool call a turn stopped for (`awaiting_approval`); answers
   * status `waiting`: the next turn without input continues the tool loop.
   */
  resolvePermission(
    tenant: string,
    sessionId: string,
    request: PermissionResolutionRequest,
    options?: TurnOptions,
  ): Promise<TurnResponse>
  /**
   * Answers a plan that ended a plan-mode turn `awaiting_approval`: executing decisions run the
   * build turn at once (`fresh_context` after a context reset); 409 when no plan waits.
   */
  approvePlan(
    tenant: string,
    sessionId: string,
    request: PlanApprovalRequest,
    options?: TurnOptions,
  ): Promise<TurnResponse>
  /**
   * An automation run (a verified webhook delivery): a session with a caller-derived id and its
   * first turn, exactly once per delivery id; the thread ends with that turn.
   */
  trigger(
    tenant: string,
    request: { sessionId: string; deliveryId: string; config: SessionConfigInput; input: string },
  ): Promise<{ session_id: string; duplicate: boolean; turn: TurnResponse }>
  /** A new session seeded with this one's summarized history; the source is untouched. */
  fork(
    tenant: string,
    sessionId: string,
    options?: ForkRequest,
  ): Promise<CreateSessionResponse & { forked_from: string }>
  /**
   * Manual compaction (trigger `manual`, always summarizes): the transcript is replaced by the
   * summary, retained user messages, continuity tail and memory envelope; the response holds
   * `thread.compact_boundary`. 409 while a turn is open or when there is nothing to compact.
   */
  compact(tenant: string, sessionId: string, options?: CompactOptions): Promise<TurnResponse>
  /**
   * The sandbox runner's (verified) notice that a command exited: continues the turn waiting
   * on it, if any. `resumed` is false when nothing waits on it or another call already does.
   */
  runnerExited(notice: { tenant: string; session_id: string; exec_session_id: string }): Promise<{
    resumed: boolean
    status?: TurnStatus
  }>
  /** A page of the session's turns, each with its recorded input (store/turn-inputs.ts). */
  listTurns(tenant: string, sessionId: string, query: TurnsQuery): Promise<TurnPage>
  /** Events with seq > after (after = -1 → from the start). */
  readEvents(tenant: string, sessionId: string, after: number, limit: number): Promise<EventPage>
  /**
   * A fresh Open Responses view for the events of an exec run with this config (the exec body
   * without its prompt); what the response echoes comes from the config and its response record.
   */
  openResponsesView(config: SessionConfigInput, options?: ResponseViewOptions): OpenResponsesView
  /**
   * The view of a stored response (`resp_<session id>`), to be fed the session's committed
   * events: the same settings, creation second and sequence numbers the live stream had.
   * TurnlineError('not_found') when the session does not exist or was not created by
   * `POST /v1/responses`.
   */
  storedResponseView(
    tenant: string,
    sessionId: string,
    options?: ResponseViewOptions,
  ): Promise<StoredResponseView>
  /**
   * `GET /v1/responses/:id/input_items`: the response's input items in input order
   * (open-responses/response-input-items.ts). TurnlineError('not_found') as storedResponseView.
   */
  responseInputItems(tenant: string, sessionId: string): Promise<ListedInputItem[]>
  /**
   * `POST /v1/responses/compact`: the conversation compacted in a session of its own, which is
   * erased once it answered (open-responses/compact-response.ts). `timeLeft`: the platform's
   * bound on the request (Lambda), which its start hooks and its compaction stop before.
   */
  compactResponse(
    tenant: string,
    request: ResponsesCompactRequest,
    options?: Pick<TurnOptions, 'timeLeft'>,
  ): Promise<CompactResource>
  /**
   * `POST /v1/responses`: one response, a session seeded with the conversation so far whose one
   * turn runs the input (src/core/open-responses/response-run.ts); events stream to onEvent.
   */
  respond(
    tenant: string,
    request: ResponseRunRequest,
    options?: TurnOptions,
  ): Promise<ResponseRunResult>
  /**
   * Exec mode: create, one turn with the prompt, then complete; events stream to onEvent. A turn
   * that stayed open (paused before the platform's timeout, or waiting) leaves the session open:
   * `open` says so.
   */
  exec(
    tenant: string,
    body: SessionConfigInput & { prompt: TurnInput },
    options?: TurnOptions,
  ): Promise<{ session_id: string; events: ThreadEvent[]; open?: LeftOpen }>
}

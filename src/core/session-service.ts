import type {
  CreateSessionResponse,
  IntentRequest,
  ListSessionsQuery,
  SessionView,
  TurnRequest,
  TurnResponse,
  TurnsQuery,
} from '../contract/api.ts'
import { parseEngineState } from '../contract/engine-state.ts'
import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import type { ResponsesCompactRequest } from '../contract/open-responses-compaction.ts'
import type { ResponseRunRequest } from '../contract/open-responses-run.ts'
import type { PermissionResolutionRequest } from '../contract/permission-resolution.ts'
import type { PlanApprovalRequest } from '../contract/plan-approval.ts'
import type { ForkRequest } from '../contract/route-bodies.ts'
import type { SessionConfigInput } from '../contract/session-config.ts'
import type { ThreadEvent } from '../contract/thread-event.ts'
import type { TurnInput } from '../contract/turn-input.ts'
import type { EventPage } from '../store/read-events.ts'
import { SessionLocator } from '../store/session-locator.ts'
import type { TurnPage } from '../store/turn-inputs.ts'
import { BackgroundService } from './background/background-service.ts'
import { listDeliveries, listLoopDeliveries } from './callbacks/list-deliveries.ts'
import { tokenizerForModel } from './compaction/bpe-tokenizer.ts'
import { compactSession } from './compaction/manual-compaction.ts'
import { admitStep } from './engine/admit-step.ts'
import type { ServiceDeps } from './engine/service-deps.ts'
import { serviceLog } from './engine/service-log.ts'
import { compactResponse } from './open-responses/compact-response.ts'
import { openResponsesView } from './open-responses/open-responses-view.ts'
import { responseInputItems } from './open-responses/response-input-items.ts'
import { runResponse } from './open-responses/response-run.ts'
import { storedResponseView } from './open-responses/stored-response-view.ts'
import { recordPermissionDecision } from './permissions/decide-permission.ts'
import { approvePlan } from './plan/approve-plan.ts'
import { type AutomationRequest, triggerAutomation } from './session/automation-run.ts'
import { parseConfig, startSession } from './session/create-session.ts'
import { deleteSession } from './session/delete-session.ts'
import { deleteWorkspace } from './session/delete-workspace.ts'
import { endSession } from './session/end-session.ts'
import { enqueueIntent } from './session/enqueue-intent.ts'
import { execRunEnd } from './session/exec-run-end.ts'
import { forkSession } from './session/fork-session.ts'
import { listSessions, listTurns, listWorkspaces } from './session/list-sessions.ts'
import { sessionView } from './session/session-view.ts'
import type {
  CompactOptions,
  OpenResponsesView,
  ResponseViewOptions,
  SessionApi,
  TurnOptions,
} from './session-api.ts'
import { stepTurn } from './turn/step-turn.ts'

/**
 * The model whose encoding a server loads before it serves when the deployment names no default
 * model: o200k_base, the encoding of gpt-4o and later, the o-series, gpt-5 and any model not
 * known (bpe-tokenizer.ts).
 */
const PRELOADED_MODEL = 'gpt-4o'

/**
 * Loads the encoding of `model` (default: o200k_base's), with the default tokenizer unless told
 * otherwise: an entry may start it before its deps are built (it overlaps what they wait for,
 * such as the embedded runner's start); `preload` then finds it loaded.
 */
export async function preloadEncodings(
  load: (model: string) => Promise<unknown> = tokenizerForModel,
  model = PRELOADED_MODEL,
): Promise<void> {
  await load(model)
}

/** Where the token counter's rank tables come from: each runtime entry's choice (bpe-tokenizer.ts). */
export {
  packagedRankTables,
  type RankTableSource,
  useRankTables,
} from './compaction/bpe-tokenizer.ts'
/** What the runtime entries build (functions/deps.ts) to construct the service. */
export type {
  SandboxConfig,
  ServiceDefaults,
  ServiceDeps,
  TenantCaps,
} from './engine/service-deps.ts'

/** The turn engine behind the HTTP API: stateless per call, all state in the store. */
export class SessionService extends BackgroundService implements SessionApi {
  private creates = 0

  constructor(
    deps: ServiceDeps,
    private readonly options: { prefix?: string; retentionEvery?: number } = {},
  ) {
    super(
      deps,
      new SessionLocator(deps.sessions.objects, options.prefix ?? '', deps.sessions.locations),
      options.prefix ?? '',
    )
  }

  /**
   * Loads what a request would otherwise load on first use and that holds the thread while it
   * loads: the encoding of the deployment's default model (o200k_base's without one; ≈ 10–15 ms of
   * CPU for its rank table). A long-running server calls it before it serves, so no tenant's
   * first turn stalls every other request. The other encoding (cl100k_base, for sessions that
   * name a model older than gpt-4o) loads when a count first needs it: preloading it cost every
   * start ≈ 80 ms of CPU before listening (docs/performance.md, cold start).
   */
  async preload(): Promise<void> {
    await preloadEncodings(
      this.deps.tokenizer ?? tokenizerForModel,
      this.deps.defaults.model ?? PRELOADED_MODEL,
    )
  }

  async createSession(
    tenant: string,
    body: SessionConfigInput,
    /** An exec run's: the thread ends with its turn (exec-run-end.ts), the time it has. */
    run: { endAfterTurn?: boolean; timeLeft?: TurnOptions['timeLeft'] } = {},
  ): Promise<CreateSessionResponse> {
    const config = parseConfig(body)
    const ref = await startSession(this.deps, this.locator, tenant, config, {
      source: 'startup',
      ...run,
    })
    const sessionId = ref.sessionId
    if (++this.creates % (this.options.retentionEvery ?? 25) === 0) {
      await this.deps.sessions
        .retention(tenant, config.workspace, { preserve: [sessionId] })
        .then((result) => this.locator.forget(tenant, result.deleted))
        .catch((error) => serviceLog(this.deps)({ msg: 'retention failed', error: String(error) }))
    }
    return { session_id: sessionId, thread_id: sessionId, status: 'active' }
  }

  listSessions(tenant: string, query: ListSessionsQuery) {
    return listSessions(this.deps, tenant, query)
  }

  listWorkspaces(tenant: string) {
    return listWorkspaces(this.deps.sessions, tenant)
  }

  async getSession(tenant: string, sessionId: string): Promise<SessionView> {
    return sessionView(this.deps, await this.locator.locate(tenant, sessionId))
  }

  async stepTurn(
    tenant: string,
    sessionId: string,
    request: TurnRequest,
    options?: TurnOptions,
  ): Promise<TurnResponse> {
    return stepTurn(this.deps, await this.locator.locate(tenant, sessionId), request, options)
  }

  async complete(tenant: string, sessionId: string, options?: TurnOptions) {
    return endSession(this.deps, await this.locator.locate(tenant, sessionId), 'complete', options)
  }

  async cancel(tenant: string, sessionId: string, options?: TurnOptions) {
    return endSession(this.deps, await this.locator.locate(tenant, sessionId), 'cancel', options)
  }
  deleteSession = (tenant: string, id: string) => deleteSession(this.deps, this.locator, tenant, id)
  deleteWorkspace = (tenant: string, workspace: string) =>
    deleteWorkspace(this.deps, this.locator, tenant, workspace)

  listDeliveries = (tenant: string, id: string) =>
    listDeliveries(this.deps, this.locator, tenant, id)
  listLoopDeliveries = (tenant: string, loopId: string) =>
    listLoopDeliveries(this.deps, tenant, loopId)

  async trigger(tenant: string, request: AutomationRequest) {
    return triggerAutomation(this.deps, this.locator, tenant, request)
  }

  async approvePlan(
    tenant: string,
    sessionId: string,
    request: PlanApprovalRequest,
    options?: TurnOptions,
  ) {
    return approvePlan(this.deps, await this.locator.locate(tenant, sessionId), request, options)
  }

  async fork(tenant: string, sessionId: string, options: ForkRequest = {}) {
    return forkSession(
      this.deps,
      this.locator,
      await this.locator.locate(tenant, sessionId),
      options,
    )
  }

  async compact(tenant: string, sessionId: string, options: CompactOptions = {}) {
    const { instructions, ...turn } = options
    const ref = await this.locator.locate(tenant, sessionId)
    return compactSession(this.deps, ref, instructions ? { instructions } : {}, turn)
  }

  async runnerExited(notice: { tenant: string; session_id: string; exec_session_id: string }) {
    const ref = await this.locator.locate(notice.tenant, notice.session_id)
    const snapshot = await this.deps.sessions.open(ref)
    const waiting = parseEngineState(snapshot.state).open_turn?.waiting
    if (waiting?.resume.exec_session_id !== notice.exec_session_id) return { resumed: false }
    try {
      const turn = await this.stepTurn(notice.tenant, notice.session_id, {})
      return { resumed: true, status: turn.status }
    } catch (error) {
      // Another invocation is continuing the turn already (a later turn request or a retry).
      if (isTurnlineError(error, 'session_busy')) return { resumed: false }
      // Refused for the tenant's quota or turn slots (429): the turn still waits on the command,
      // so the runner's redelivery or the tenant's next turn without input continues it.
      throw error
    }
  }

  async resolvePermission(
    tenant: string,
    sessionId: string,
    request: PermissionResolutionRequest,
    options?: TurnOptions,
  ) {
    const ref = await this.locator.locate(tenant, sessionId)
    return recordPermissionDecision(this.deps, ref, request, options)
  }

  async enqueueIntent(tenant: string, sessionId: string, request: IntentRequest) {
    return enqueueIntent(this.deps, await this.locator.locate(tenant, sessionId), request)
  }

  async listTurns(tenant: string, sessionId: string, query: TurnsQuery): Promise<TurnPage> {
    return listTurns(this.deps.sessions, await this.locator.locate(tenant, sessionId), query)
  }

  async readEvents(
    tenant: string,
    sessionId: string,
    after: number,
    limit: number,
  ): Promise<EventPage> {
    const ref = await this.locator.locate(tenant, sessionId)
    return this.deps.sessions.readEvents(ref, after + 1, limit)
  }

  openResponsesView(config: SessionConfigInput, options?: ResponseViewOptions): OpenResponsesView {
    const extensions = options?.extensions ?? false
    return openResponsesView(parseConfig(config), { extensions, holdEnd: true })
  }

  async storedResponseView(tenant: string, sessionId: string, options?: ResponseViewOptions) {
    return storedResponseView(this.deps, await this.locator.locate(tenant, sessionId), options)
  }

  compactResponse(tenant: string, request: ResponsesCompactRequest, options?: TurnOptions) {
    return compactResponse(this.deps, this.locator, tenant, request, options)
  }

  async responseInputItems(tenant: string, sessionId: string) {
    return responseInputItems(this.deps, await this.locator.locate(tenant, sessionId))
  }

  respond(tenant: string, request: ResponseRunRequest, options?: TurnOptions) {
    return runResponse(this.deps, this.locator, tenant, request, options)
  }

  async exec(
    tenant: string,
    body: SessionConfigInput & { prompt: TurnInput },
    options: TurnOptions = {},
  ) {
    const { prompt, ...config } = body
    if (prompt === undefined || prompt.length === 0) {
      throw new TurnlineError('invalid_input', 'prompt is required', {
        details: { field: 'prompt' },
      })
    }
    // One admitted step: the turn runs in its slot, the session is created only once admitted.
    return admitStep(this.deps, tenant, undefined, async (admitted) => {
      const key = options.idempotencyKey
      if (key !== undefined)
        return this.keyedExec(tenant, { config, prompt, key }, options, admitted)
      const { timeLeft } = options
      const created = await this.createSession(tenant, config, { endAfterTurn: true, timeLeft })
      const events: ThreadEvent[] = [{ type: 'thread.started', thread_id: created.thread_id }]
      options.onEvent?.(events[0] as ThreadEvent, 0)
      const ref = await this.locator.locate(tenant, created.session_id)
      const turn = await stepTurn(this.deps, ref, { input: prompt }, options, admitted)
      const end = await execRunEnd(this.deps, ref, turn, options)
      events.push(...turn.events, ...end.events)
      if (end.open) return { session_id: created.session_id, events, open: end.open }
      return { session_id: created.session_id, events }
    })
  }
}

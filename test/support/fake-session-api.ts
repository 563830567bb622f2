import type {
  CreateSessionResponse,
  ListSessionsQuery,
  SessionView,
  TurnRequest,
  TurnResponse,
} from '../../src/contract/api.ts'
import type { DeliveryList } from '../../src/contract/callback-delivery.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import type {
  ResponseRunRequest,
  ResponseRunResult,
} from '../../src/contract/open-responses-run.ts'
import { EVENT_SCHEMA_VERSION } from '../../src/contract/serialize.ts'
import { type SessionConfigInput, SessionConfigSchema } from '../../src/contract/session-config.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import { openResponsesView } from '../../src/core/open-responses/open-responses-view.ts'
import type {
  LoopRunStarted,
  QueuedWork,
  SessionApi,
  StoredResponseView,
  TurnOptions,
  WorkRunOutcome,
  WorkStatus,
} from '../../src/core/session-api.ts'
import type { EventPage } from '../../src/store/read-events.ts'
import type { TurnPage } from '../../src/store/turn-inputs.ts'
import { FakeAgentLayer } from './fake-agent-layer.ts'

/**
 * A small in-memory SessionApi for tests of the pure HTTP concerns (routing, validation, error
 * mapping, auth, framing). It is not the engine: a turn echoes its input as an agent message.
 * Tenant-scoped like the real one: another tenant's session is not_found.
 */
interface FakeSession {
  tenant: string
  id: string
  events: ThreadEvent[]
  status: 'active' | 'completed'
  config: ReturnType<typeof SessionConfigSchema.parse>
  busy: boolean
  turns: number
  intents?: number
}

const usage = {
  input_tokens: 3,
  cached_input_tokens: 1,
  cache_creation_tokens: 0,
  output_tokens: 2,
}
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class FakeSessionApi extends FakeAgentLayer implements SessionApi {
  readonly sessions = new Map<string, FakeSession>()
  /** Method names called, in order. */
  readonly calls: string[] = []
  /** Wait before each live event of a turn (streaming tests). */
  eventDelayMs = 0
  /** Thrown by the next call of any method (then cleared). */
  failNext: unknown
  /** Thrown by the next turn after its first live event (mid-stream failure). */
  failMidTurn: unknown
  private readonly idempotent = new Map<string, TurnResponse>()
  private counter = 0

  private take(method: string): void {
    this.calls.push(method)
    const failure = this.failNext
    if (failure !== undefined) {
      this.failNext = undefined
      throw failure
    }
  }

  private find(tenant: string, sessionId: string): FakeSession {
    const session = this.sessions.get(sessionId)
    if (!session || session.tenant !== tenant) {
      throw new TurnlineError('not_found', `session ${sessionId} not found`)
    }
    return session
  }

  async createSession(tenant: string, body: SessionConfigInput): Promise<CreateSessionResponse> {
    this.take('createSession')
    this.counter += 1
    const id = `session-${this.counter}`
    const config = SessionConfigSchema.parse(body)
    this.sessions.set(id, {
      tenant,
      id,
      events: [{ type: 'thread.started', thread_id: id }],
      status: 'active',
      config,
      busy: false,
      turns: 0,
    })
    return { session_id: id, thread_id: id, status: 'active' }
  }

  async listSessions(tenant: string, query: ListSessionsQuery) {
    this.take('listSessions')
    const views = [...this.sessions.values()]
      .filter((s) => s.tenant === tenant && s.config.workspace === query.workspace)
      .filter((s) => query.status === undefined || s.status === query.status)
      .map((s) => {
        const view = this.view(s)
        return { ...view, last_activity_at: view.updated_at }
      })
    return { sessions: views.slice(0, query.limit) }
  }

  async listWorkspaces(tenant: string) {
    this.take('listWorkspaces')
    const counts = new Map<string, number>()
    for (const s of this.sessions.values()) {
      if (s.tenant === tenant)
        counts.set(s.config.workspace, (counts.get(s.config.workspace) ?? 0) + 1)
    }
    const names = [...counts.keys()].sort()
    return {
      workspaces: names.map((workspace) => ({ workspace, sessions: counts.get(workspace) ?? 0 })),
    }
  }

  async getSession(tenant: string, sessionId: string): Promise<SessionView> {
    this.take('getSession')
    return this.view(this.find(tenant, sessionId))
  }

  async deleteSession(tenant: string, sessionId: string): Promise<void> {
    this.take('deleteSession')
    this.find(tenant, sessionId)
    this.sessions.delete(sessionId)
  }
  async deleteWorkspace(_tenant: string, _workspace: string): Promise<void> {
    this.take('deleteWorkspace')
  }

  async listDeliveries(tenant: string, sessionId: string): Promise<DeliveryList> {
    this.take('listDeliveries')
    this.find(tenant, sessionId)
    return { deliveries: [] }
  }

  listLoopDeliveries = async (): Promise<DeliveryList> => this.unsupported('listLoopDeliveries')

  private view(s: FakeSession): SessionView {
    const now = '2026-01-01T00:00:00Z'
    return {
      session_id: s.id,
      thread_id: s.id,
      workspace: s.config.workspace,
      status: s.status,
      created_at: now,
      updated_at: now,
      turn_count: s.turns,
      event_count: s.events.length,
      last_seq: s.events.length - 1,
      num_turns: s.turns,
      usage: ZERO_USAGE,
      config: s.config,
      budget: { status: 'ok', steps: { used: s.turns }, tokens: { used: 0 }, cost_usd: {} },
    }
  }

  /** Appends events one by one, announcing each live; the "commit" is the append. */
  private async run(s: FakeSession, events: ThreadEvent[], options: TurnOptions): Promise<number> {
    const first = s.events.length
    for (const [i, event] of events.entries()) {
      if (this.eventDelayMs > 0) await delay(this.eventDelayMs)
      options.onEvent?.(event, first + i)
      if (i === 0 && this.failMidTurn !== undefined) {
        const failure = this.failMidTurn
        this.failMidTurn = undefined
        throw failure
      }
    }
    s.events.push(...events)
    return first
  }

  async stepTurn(
    tenant: string,
    sessionId: string,
    request: TurnRequest,
    options: TurnOptions = {},
  ): Promise<TurnResponse> {
    this.take('stepTurn')
    const s = this.find(tenant, sessionId)
    const key = options.idempotencyKey && `${tenant}:${options.idempotencyKey}`
    const replay = key ? this.idempotent.get(key) : undefined
    if (replay) return replay
    if (s.status === 'completed') {
      throw new TurnlineError('session_completed', `session ${sessionId} is completed`)
    }
    if (s.busy) {
      throw new TurnlineError('session_busy', 'a turn is running', { retryAfter: 2 })
    }
    s.busy = true
    try {
      const events: ThreadEvent[] = [
        { type: 'turn.started' },
        {
          type: 'item.completed',
          item: {
            id: `item_${s.turns}`,
            type: 'agent_message',
            text: typeof request.input === 'string' ? request.input : '',
          },
        },
        { type: 'turn.completed', usage },
      ]
      await this.run(s, events, options)
      s.turns += 1
      const response: TurnResponse = {
        turn_id: `turn-${s.turns}`,
        status: 'completed',
        events,
        next_seq: s.events.length,
      }
      if (key) this.idempotent.set(key, response)
      return response
    } finally {
      s.busy = false
    }
  }

  private async finish(
    tenant: string,
    sessionId: string,
    subtype: 'success' | 'cancelled',
    options: TurnOptions,
  ): Promise<TurnResponse> {
    const s = this.find(tenant, sessionId)
    if (s.status === 'completed') {
      throw new TurnlineError('session_completed', `session ${sessionId} is completed`)
    }
    const event: ThreadEvent = {
      type: 'thread.completed',
      thread_id: s.id,
      session_id: s.id,
      subtype,
      outcome_code: subtype,
      usage: ZERO_USAGE,
      num_turns: s.turns,
    }
    await this.run(s, [event], options)
    s.status = 'completed'
    return {
      turn_id: `end-${s.id}`,
      status: 'terminal',
      events: [event],
      next_seq: s.events.length,
    }
  }

  async complete(tenant: string, sessionId: string, options: TurnOptions = {}) {
    this.take('complete')
    return this.finish(tenant, sessionId, 'success', options)
  }

  async cancel(tenant: string, sessionId: string, options: TurnOptions = {}) {
    this.take('cancel')
    return this.finish(tenant, sessionId, 'cancelled', options)
  }

  async compact(tenant: string, sessionId: string): Promise<TurnResponse> {
    this.take('compact')
    const s = this.find(tenant, sessionId)
    if (s.status === 'completed') {
      throw new TurnlineError('session_completed', `session ${sessionId} is completed`)
    }
    const event: ThreadEvent = {
      type: 'thread.compact_boundary',
      thread_id: s.id,
      trigger: 'manual',
      mode: 'local',
      original_message_count: s.events.length,
      compacted_message_count: 1,
    }
    await this.run(s, [event], {})
    return {
      turn_id: `turn-${s.turns}`,
      status: 'completed',
      events: [event],
      next_seq: s.events.length,
    }
  }

  async trigger(): Promise<{ session_id: string; duplicate: boolean; turn: TurnResponse }> {
    this.take('trigger')
    throw new TurnlineError('internal', 'automation runs are not part of the fake')
  }

  /** Background turns are not part of the fake either. */
  private unsupported(method: string): never {
    this.take(method)
    throw new TurnlineError('internal', 'background turns are not part of the fake')
  }
  queueTurn = async (): Promise<QueuedWork> => this.unsupported('queueTurn')
  queueExec = async (): Promise<QueuedWork> => this.unsupported('queueExec')
  queueTrigger = async (): Promise<QueuedWork> => this.unsupported('queueTrigger')
  queueLoopStep = async (): Promise<QueuedWork> => this.unsupported('queueLoopStep')
  loopWorkStatus = async (): Promise<WorkStatus> => this.unsupported('loopWorkStatus')
  runWork = async (): Promise<WorkRunOutcome> => this.unsupported('runWork')
  listWork = async () => ({ items: [] })
  runLoop = async (): Promise<LoopRunStarted> => this.unsupported('runLoop')
  createRunningLoop = async (): Promise<LoopRunStarted> => this.unsupported('createRunningLoop')
  queueResponse = async (): Promise<QueuedWork> => this.unsupported('queueResponse')
  fireSchedules = async () => ({ started: [], skipped: 0 })
  workStatus = async (): Promise<WorkStatus> => this.unsupported('workStatus')

  async approvePlan(tenant: string, sessionId: string): Promise<TurnResponse> {
    this.take('approvePlan')
    this.find(tenant, sessionId)
    throw new TurnlineError('conflict', 'no plan is waiting for approval')
  }

  async fork(tenant: string, sessionId: string) {
    this.take('fork')
    const source = this.find(tenant, sessionId)
    const created = await this.createSession(tenant, source.config)
    return { ...created, forked_from: sessionId }
  }

  async runnerExited() {
    this.take('runnerExited')
    return { resumed: false }
  }

  async resolvePermission(tenant: string, sessionId: string): Promise<TurnResponse> {
    this.take('resolvePermission')
    this.find(tenant, sessionId)
    throw new TurnlineError('conflict', 'no tool call is waiting for a permission decision')
  }

  async enqueueIntent(tenant: string, sessionId: string, request: { text: string }) {
    this.take('enqueueIntent')
    const session = this.find(tenant, sessionId)
    session.intents = (session.intents ?? 0) + 1
    if (session.intents > 16) throw new TurnlineError('follow_up_queue_full', 'full (capacity 16)')
    void request
    return { id: crypto.randomUUID(), pending: session.intents }
  }

  /** Every `turn.started` of the session, none with a recorded input. */
  async listTurns(tenant: string, sessionId: string): Promise<TurnPage> {
    this.take('listTurns')
    const s = this.find(tenant, sessionId)
    const turns = s.events.flatMap((event, seq) =>
      event.type === 'turn.started' ? [{ seq, started_at: '2026-01-01T00:00:00Z' }] : [],
    )
    return { turns }
  }

  async readEvents(
    tenant: string,
    sessionId: string,
    after: number,
    limit: number,
  ): Promise<EventPage> {
    this.take('readEvents')
    const s = this.find(tenant, sessionId)
    const start = Math.max(0, after + 1)
    const slice = s.events.slice(start, start + limit)
    const events = slice.map((event, i) => ({
      seq: start + i,
      line: { schema_version: EVENT_SCHEMA_VERSION, event },
    }))
    const nextSeq = start + slice.length
    return { events, nextSeq, complete: nextSeq >= s.events.length }
  }

  /** The real view: it is a pure mapping of the events this fake produces. */
  openResponsesView(config: SessionConfigInput) {
    return openResponsesView(SessionConfigSchema.parse(config))
  }

  async storedResponseView(tenant: string, sessionId: string): Promise<StoredResponseView> {
    this.find(tenant, sessionId)
    throw new TurnlineError('not_found', `no response resp_${sessionId}`)
  }

  async compactResponse(): Promise<never> {
    throw new TurnlineError('model_not_configured', 'the fake session API compacts nothing')
  }

  async responseInputItems(tenant: string, sessionId: string): Promise<never> {
    this.find(tenant, sessionId)
    throw new TurnlineError('not_found', `no response resp_${sessionId}`)
  }

  async exec(
    tenant: string,
    body: SessionConfigInput & { prompt: string },
    options: TurnOptions = {},
  ): Promise<{ session_id: string; events: ThreadEvent[] }> {
    const { prompt, ...config } = body
    const created = await this.createSession(tenant, config)
    const s = this.find(tenant, created.session_id)
    const [started] = s.events
    if (started) options.onEvent?.(started, 0)
    await this.stepTurn(tenant, s.id, { input: prompt }, options)
    await this.complete(tenant, s.id, options)
    return { session_id: s.id, events: [...s.events] }
  }

  /** A response as an exec run of its input (the fake keeps no transcript to seed). */
  async respond(
    tenant: string,
    request: ResponseRunRequest,
    options: TurnOptions = {},
  ): Promise<ResponseRunResult> {
    const input = request.run.input
    const prompt = typeof input === 'string' ? input : 'parts'
    const { session_id, events } = await this.exec(
      tenant,
      { ...request.run.config, prompt },
      options,
    )
    return { session_id, events, status: 'terminal' }
  }
}

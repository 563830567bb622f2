import type { TurnResponse } from '../../src/contract/api.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { SessionApi, TurnOptions } from '../../src/core/session-api.ts'
import { noTelemetry, type Telemetry } from '../../src/ports/telemetry.ts'
import type { LogSink } from './request-log.ts'

type Op =
  | 'turn'
  | 'complete'
  | 'cancel'
  | 'permission'
  | 'plan_approval'
  | 'compact'
  | 'exec'
  | 'response'
  | 'webhook'
  | 'runner_callback'
  | 'background'

/**
 * The SessionApi with one structured line per turn-stepping call: `{ts, level, msg: "turn", op,
 * tenant, session, turn, status, outcome?, duration_ms, model_calls, events}` — `outcome` is the
 * `thread.completed` subtype when the call ended the session; `model_calls` the model requests
 * the call made (0 for an idempotent replay; absent for webhook, runner-callback and background
 * runs, whose turns the service steps itself). A call that fails logs `error` (its code) instead of a
 * status. Other methods pass through unlogged (the request line covers them).
 */
export function loggedSessionApi(
  api: SessionApi,
  log: LogSink | undefined,
  telemetry: Telemetry = noTelemetry,
): SessionApi {
  return new LoggedSessionApi(api, log, telemetry)
}

type Args<K extends keyof SessionApi> = Parameters<SessionApi[K]>

/**
 * A decorator that names every method of the SessionApi (the compiler holds it to the
 * interface, so a new method cannot slip past it): the turn-stepping ones are logged, the rest
 * pass through.
 */
class LoggedSessionApi implements SessionApi {
  constructor(
    private readonly api: SessionApi,
    private readonly log: LogSink | undefined,
    private readonly telemetry: Telemetry,
  ) {}

  // Logged: every call that steps a turn.
  stepTurn = (...[tenant, sessionId, request, options]: Args<'stepTurn'>) =>
    this.timed(
      { op: 'turn', tenant, session: sessionId, options },
      (o) => this.api.stepTurn(tenant, sessionId, request, o),
      turnFields,
    )
  complete = (...[tenant, sessionId, options]: Args<'complete'>) =>
    this.timed(
      { op: 'complete', tenant, session: sessionId, options },
      (o) => this.api.complete(tenant, sessionId, o),
      turnFields,
    )
  cancel = (...[tenant, sessionId, options]: Args<'cancel'>) =>
    this.timed(
      { op: 'cancel', tenant, session: sessionId, options },
      (o) => this.api.cancel(tenant, sessionId, o),
      turnFields,
    )
  resolvePermission = (...[tenant, sessionId, request, options]: Args<'resolvePermission'>) =>
    this.timed(
      { op: 'permission', tenant, session: sessionId, options },
      (o) => this.api.resolvePermission(tenant, sessionId, request, o),
      turnFields,
    )
  approvePlan = (...[tenant, sessionId, request, options]: Args<'approvePlan'>) =>
    this.timed(
      { op: 'plan_approval', tenant, session: sessionId, options },
      (o) => this.api.approvePlan(tenant, sessionId, request, o),
      turnFields,
    )
  compact = (...[tenant, sessionId, options]: Args<'compact'>) =>
    this.timed(
      { op: 'compact', tenant, session: sessionId, options },
      (o) => this.api.compact(tenant, sessionId, o),
      turnFields,
    )
  exec = (...[tenant, body, options]: Args<'exec'>) =>
    this.timed(
      { op: 'exec', tenant, session: undefined, options },
      (o) => this.api.exec(tenant, body, o),
      (result) => ({
        session: result.session_id,
        events: result.events.length,
        ...outcomeOf(result.events),
      }),
    )
  respond = (...[tenant, request, options]: Args<'respond'>) =>
    this.timed(
      { op: 'response', tenant, session: undefined, options },
      (o) => this.api.respond(tenant, request, o),
      (result) => ({
        session: result.session_id,
        events: result.events.length,
        status: result.status,
        ...outcomeOf(result.events),
      }),
    )
  trigger = (...[tenant, request]: Args<'trigger'>) =>
    this.timed(
      { op: 'webhook', tenant, session: request.sessionId, options: null },
      () => this.api.trigger(tenant, request),
      (result) => ({ duplicate: result.duplicate, ...turnFields(result.turn) }),
    )
  runnerExited = (...[notice]: Args<'runnerExited'>) =>
    this.timed(
      { op: 'runner_callback', tenant: notice.tenant, session: notice.session_id, options: null },
      () => this.api.runnerExited(notice),
      (result) => ({
        resumed: result.resumed,
        ...(result.status ? { status: result.status } : {}),
      }),
    )

  runWork = (...[at]: Args<'runWork'>) =>
    this.timed(
      { op: 'background', tenant: at.tenant, session: at.session_id, options: null },
      () => this.api.runWork(at),
      (result) => ({
        work: at.work_id,
        result: result.outcome,
        ...('status' in result ? { status: result.status } : {}),
        ...('error' in result ? { error: result.error.code } : {}),
      }),
    )

  // Passed through: the request line covers them.
  queueTurn = (...args: Args<'queueTurn'>) => this.api.queueTurn(...args)
  queueExec = (...args: Args<'queueExec'>) => this.api.queueExec(...args)
  queueTrigger = (...args: Args<'queueTrigger'>) => this.api.queueTrigger(...args)
  queueLoopStep = (...args: Args<'queueLoopStep'>) => this.api.queueLoopStep(...args)
  loopWorkStatus = (...args: Args<'loopWorkStatus'>) => this.api.loopWorkStatus(...args)
  listWork = (...args: Args<'listWork'>) => this.api.listWork(...args)
  runLoop = (...args: Args<'runLoop'>) => this.api.runLoop(...args)
  createRunningLoop = (...args: Args<'createRunningLoop'>) => this.api.createRunningLoop(...args)
  queueResponse = (...args: Args<'queueResponse'>) => this.api.queueResponse(...args)
  fireSchedules = (...args: Args<'fireSchedules'>) => this.api.fireSchedules(...args)
  workStatus = (...args: Args<'workStatus'>) => this.api.workStatus(...args)
  createSession = (...args: Args<'createSession'>) => this.api.createSession(...args)
  listSessions = (...args: Args<'listSessions'>) => this.api.listSessions(...args)
  listWorkspaces = (...args: Args<'listWorkspaces'>) => this.api.listWorkspaces(...args)
  getSession = (...args: Args<'getSession'>) => this.api.getSession(...args)
  deleteSession = (...args: Args<'deleteSession'>) => this.api.deleteSession(...args)
  deleteWorkspace = (...args: Args<'deleteWorkspace'>) => this.api.deleteWorkspace(...args)
  listDeliveries = (...args: Args<'listDeliveries'>) => this.api.listDeliveries(...args)
  listLoopDeliveries = (...args: Args<'listLoopDeliveries'>) => this.api.listLoopDeliveries(...args)
  enqueueIntent = (...args: Args<'enqueueIntent'>) => this.api.enqueueIntent(...args)
  fork = (...args: Args<'fork'>) => this.api.fork(...args)
  readEvents = (...args: Args<'readEvents'>) => this.api.readEvents(...args)
  listTurns = (...args: Args<'listTurns'>) => this.api.listTurns(...args)
  openResponsesView = (...args: Args<'openResponsesView'>) => this.api.openResponsesView(...args)
  storedResponseView = (...args: Args<'storedResponseView'>) => this.api.storedResponseView(...args)
  responseInputItems = (...args: Args<'responseInputItems'>) => this.api.responseInputItems(...args)
  compactResponse = (...args: Args<'compactResponse'>) => this.api.compactResponse(...args)
  getOutputArtifact = (...args: Args<'getOutputArtifact'>) => this.api.getOutputArtifact(...args)
  listKeptOutputs = (...args: Args<'listKeptOutputs'>) => this.api.listKeptOutputs(...args)
  listArtifacts = (...args: Args<'listArtifacts'>) => this.api.listArtifacts(...args)
  getArtifact = (...args: Args<'getArtifact'>) => this.api.getArtifact(...args)
  putArtifact = (...args: Args<'putArtifact'>) => this.api.putArtifact(...args)
  appendArtifact = (...args: Args<'appendArtifact'>) => this.api.appendArtifact(...args)
  deleteArtifact = (...args: Args<'deleteArtifact'>) => this.api.deleteArtifact(...args)
  getOrientation = (...args: Args<'getOrientation'>) => this.api.getOrientation(...args)
  handoff = (...args: Args<'handoff'>) => this.api.handoff(...args)
  verify = (...args: Args<'verify'>) => this.api.verify(...args)
  createLoop = (...args: Args<'createLoop'>) => this.api.createLoop(...args)
  getLoop = (...args: Args<'getLoop'>) => this.api.getLoop(...args)
  stepLoop = (...args: Args<'stepLoop'>) => this.api.stepLoop(...args)

  /**
   * Runs one turn-stepping call and logs its line. `options` null: the call takes none, so its
   * model calls cannot be counted.
   */
  private async timed<T>(
    call: {
      op: Op
      tenant: string
      session: string | undefined
      options: TurnOptions | undefined | null
    },
    run: (options: TurnOptions) => Promise<T>,
    describe: (result: T) => Record<string, unknown>,
  ): Promise<T> {
    const { op, tenant, session, options } = call
    const started = Date.now()
    let modelCalls = 0
    const counting: TurnOptions = {
      ...(options ?? {}),
      onModelCall: () => {
        modelCalls += 1
        options?.onModelCall?.()
      },
    }
    const entry = (fields: Record<string, unknown>, level = 'info') => ({
      ts: new Date().toISOString(),
      level,
      msg: 'turn',
      op,
      tenant,
      ...(session === undefined ? {} : { session }),
      ...fields,
      duration_ms: Date.now() - started,
      ...(options === null ? {} : { model_calls: modelCalls }),
    })
    return this.telemetry.span(
      'invoke_agent',
      {
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.conversation.id': session,
          'turnline.op': op,
          'turnline.tenant': tenant,
        },
      },
      async (span) => {
        try {
          const result = await run(counting)
          const fields = describe(result)
          this.log?.(entry(fields))
          this.observe(op, fields, started)
          span.set(spanFields(fields, modelCalls))
          return result
        } catch (error) {
          const code = isTurnlineError(error) ? error.code : 'internal'
          const level = isTurnlineError(error) && !error.retryable ? 'info' : 'warn'
          this.log?.(entry({ error: code }, level))
          this.observe(op, { error: code }, started)
          throw error
        }
      },
    )
  }

  /** The turn metrics: `turnline.turn.duration` and `turnline.turns`, by op, status, outcome. */
  private observe(op: Op, fields: Record<string, unknown>, started: number): void {
    if (!this.telemetry.enabled) return
    const attributes = {
      'turnline.op': op,
      'turnline.turn.status': stringField(fields.status),
      'turnline.turn.outcome': stringField(fields.outcome),
      'error.type': stringField(fields.error),
    }
    this.telemetry.record('turnline.turn.duration', (Date.now() - started) / 1000, attributes)
    this.telemetry.count('turnline.turns', 1, attributes)
  }
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function spanFields(fields: Record<string, unknown>, modelCalls: number) {
  return {
    'gen_ai.conversation.id': stringField(fields.session),
    'turnline.turn.id': stringField(fields.turn),
    'turnline.turn.status': stringField(fields.status),
    'turnline.turn.outcome': stringField(fields.outcome),
    'turnline.turn.model_calls': modelCalls,
  }
}

function turnFields(response: TurnResponse): Record<string, unknown> {
  return {
    turn: response.turn_id,
    status: response.status,
    ...outcomeOf(response.events),
    events: response.events.length,
  }
}

function outcomeOf(events: readonly ThreadEvent[]): Record<string, unknown> {
  const last = events.at(-1)
  return last?.type === 'thread.completed'
    ? { outcome: last.subtype, outcome_code: last.outcome_code }
    : {}
}

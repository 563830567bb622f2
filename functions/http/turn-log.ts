import type { TurnResponse } from '../../src/contract/api.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { SessionApi, TurnOptions } from '../../src/core/session-api.ts'
import type { LogSink } from './request-log.ts'

type Op =
  | 'turn'
  | 'complete'
  | 'cancel'
  | 'permission'
  | 'plan_approval'
  | 'compact'
  | 'exec'
  | 'webhook'
  | 'runner_callback'

/**
 * The SessionApi with one structured line per turn-stepping call: `{ts, level, msg: "turn", op,
 * tenant, session, turn, status, outcome?, duration_ms, model_calls, events}` — `outcome` is the
 * `thread.completed` subtype when the call ended the session; `model_calls` the model requests
 * the call made (0 for an idempotent replay; absent for webhook and runner-callback runs, whose
 * turns the service steps itself). A call that fails logs `error` (its code) instead of a
 * status. Other methods pass through unlogged (the request line covers them).
 */
export function loggedSessionApi(api: SessionApi, log: LogSink): SessionApi {
  async function timed<T>(
    op: Op,
    tenant: string,
    session: string | undefined,
    /** null: the call takes no options, so its model calls cannot be counted. */
    options: TurnOptions | undefined | null,
    run: (options: TurnOptions) => Promise<T>,
    describe: (result: T) => Record<string, unknown>,
  ): Promise<T> {
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
    try {
      const result = await run(counting)
      log(entry(describe(result)))
      return result
    } catch (error) {
      const code = isTurnlineError(error) ? error.code : 'internal'
      log(entry({ error: code }, isTurnlineError(error) && !error.retryable ? 'info' : 'warn'))
      throw error
    }
  }

  return {
    ...bindAll(api),
    stepTurn: (tenant, sessionId, request, options) =>
      timed(
        'turn',
        tenant,
        sessionId,
        options,
        (o) => api.stepTurn(tenant, sessionId, request, o),
        turnFields,
      ),
    complete: (tenant, sessionId, options) =>
      timed(
        'complete',
        tenant,
        sessionId,
        options,
        (o) => api.complete(tenant, sessionId, o),
        turnFields,
      ),
    cancel: (tenant, sessionId, options) =>
      timed(
        'cancel',
        tenant,
        sessionId,
        options,
        (o) => api.cancel(tenant, sessionId, o),
        turnFields,
      ),
    resolvePermission: (tenant, sessionId, request, options) =>
      timed(
        'permission',
        tenant,
        sessionId,
        options,
        (o) => api.resolvePermission(tenant, sessionId, request, o),
        turnFields,
      ),
    approvePlan: (tenant, sessionId, request, options) =>
      timed(
        'plan_approval',
        tenant,
        sessionId,
        options,
        (o) => api.approvePlan(tenant, sessionId, request, o),
        turnFields,
      ),
    compact: (tenant, sessionId, options) =>
      timed(
        'compact',
        tenant,
        sessionId,
        options,
        (o) => api.compact(tenant, sessionId, o),
        turnFields,
      ),
    exec: (tenant, body, options) =>
      timed(
        'exec',
        tenant,
        undefined,
        options,
        (o) => api.exec(tenant, body, o),
        (result) => ({
          session: result.session_id,
          events: result.events.length,
          ...outcomeOf(result.events),
        }),
      ),
    trigger: (tenant, request) =>
      timed(
        'webhook',
        tenant,
        request.sessionId,
        null,
        () => api.trigger(tenant, request),
        (result) => ({ duplicate: result.duplicate, ...turnFields(result.turn) }),
      ),
    runnerExited: (notice) =>
      timed(
        'runner_callback',
        notice.tenant,
        notice.session_id,
        null,
        () => api.runnerExited(notice),
        (result) => ({
          resumed: result.resumed,
          ...(result.status ? { status: result.status } : {}),
        }),
      ),
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

/**
 * Every method of the service bound to it (own and inherited, so a class instance works), so the
 * decorator can spread them and override only the ones it logs.
 */
export function bindAll(api: SessionApi): SessionApi {
  const bound: Record<string, unknown> = {}
  for (let proto: object | null = api; proto && proto !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value: unknown = Reflect.get(api, name)
      if (name !== 'constructor' && !(name in bound) && typeof value === 'function') {
        bound[name] = (value as (...args: unknown[]) => unknown).bind(api)
      }
    }
    proto = Object.getPrototypeOf(proto) as object | null
  }
  return bound as unknown as SessionApi
}

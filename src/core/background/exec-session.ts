import type { TurnRequest } from '../../contract/api.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { SessionConfig, SessionConfigInput } from '../../contract/session-config.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { parseConfig, startSession } from '../session/create-session.ts'
import { assertSameConfig } from '../session/retried-config.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import type { QueuedWork } from './background-api.ts'
import { ranTurn } from './ran-turn.ts'

/** A keyed background exec as sent: its session (from the key), its settings and its prompt. */
export interface KeyedExec {
  tenant: string
  sessionId: string
  key: string
  config: SessionConfig
  request: TurnRequest
}

/**
 * The answer of a keyed background exec whose turn its session holds already — it ran (or ran
 * until it waits) and its record left the queue — as its first request had it, `duplicate`,
 * recording nothing: asked when the tenant is at the pending cap, where recording it again (the
 * worker would replay the outcome) would be refused. Undefined when the session or its turn is
 * not there (a first try that died before recording: a new request, which the cap may refuse).
 * The key with other settings or another prompt is 422, as on any retry.
 */
export async function ranExec(
  deps: ServiceDeps,
  locator: SessionLocator,
  run: KeyedExec,
): Promise<QueuedWork | undefined> {
  let stored: Awaited<ReturnType<ServiceDeps['sessions']['open']>>
  try {
    stored = await deps.sessions.open(await locator.locate(run.tenant, run.sessionId))
  } catch (error) {
    if (isTurnlineError(error, 'not_found')) return undefined
    throw error
  }
  const state = parseEngineState(stored.state)
  assertSameConfig(state.config, run.config)
  return ranTurn(state, run)
}

/**
 * Starts the session of an exec run (it ends with its first turn) under `sessionId`: one derived
 * from a key (`keyed`) may exist already — a retry, which must bring the settings its key was
 * first used with (else 422) — a fresh one never does.
 */
export async function startExecSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  body: SessionConfigInput,
  /** `timeLeft`: run in the request (Lambda), whose time its start hooks keep to. */
  run: { sessionId: string; keyed: boolean; timeLeft?: InvocationTimeLeft | undefined },
): Promise<{ sessionId: string; existed: boolean }> {
  const { sessionId } = run
  const config = parseConfig(body)
  try {
    await startSession(deps, locator, tenant, config, {
      source: 'startup',
      endAfterTurn: true,
      sessionId,
      timeLeft: run.timeLeft,
    })
    return { sessionId, existed: false }
  } catch (error) {
    if (!run.keyed || !isTurnlineError(error, 'conflict')) throw error
  }
  const stored = await deps.sessions.open(await locator.locate(tenant, sessionId))
  assertSameConfig(parseEngineState(stored.state).config, config)
  return { sessionId, existed: true }
}

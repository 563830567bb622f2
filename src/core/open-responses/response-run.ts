import { parseEngineState } from '../../contract/engine-state.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { assertAnsweredCalls } from '../../contract/open-responses-history.ts'
import { responseRecordOf } from '../../contract/open-responses-record.ts'
import type { ResponseRunRequest, ResponseRunResult } from '../../contract/open-responses-run.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { admitStep } from '../engine/admit-step.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { parseConfig, startSession } from '../session/create-session.ts'
import type { TurnOptions } from '../session-api.ts'
import { stepTurn } from '../turn/step-turn.ts'
import { sessionIdOf } from './response-record.ts'

/**
 * One response: a session seeded with the conversation so far (the previous response's
 * transcript, then what the input carries) whose one turn runs the request's input. The thread
 * ends with that turn once it completes or fails (an automation-style run); a turn that waits on
 * the client's function calls leaves it open. With an Idempotency-Key the session id derives
 * from the key, so a retry finds the session (create-only) and its turn, and answers the same
 * response without running anything again (the turn is idempotent on the same key).
 */
export function runResponse(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: ResponseRunRequest,
  options: TurnOptions = {},
): Promise<ResponseRunResult> {
  return admitStep(deps, tenant, undefined, async (admitted) => {
    const { ref, input } = await openResponseSession(deps, locator, tenant, request)
    const key = request.idempotencyKey
    const started: ThreadEvent = { type: 'thread.started', thread_id: ref.sessionId }
    options.onEvent?.(started, 0)
    const turn = await stepTurn(
      deps,
      ref,
      input === undefined ? {} : { input },
      { ...options, ...(key === undefined ? {} : { idempotencyKey: key }) },
      admitted,
    )
    const result = { session_id: ref.sessionId, events: [started, ...turn.events] }
    if (turn.status !== 'waiting') return { ...result, status: turn.status }
    // The turn stays open on the client's calls: its usage so far is in the open turn.
    const open = parseEngineState((await deps.sessions.open(ref)).state).open_turn
    return { ...result, status: turn.status, ...(open ? { usage: open.usage } : {}) }
  })
}

/**
 * The session of a response, created (or found again: a retry with the same key) and seeded
 * with the conversation so far; the input its one turn runs. A background response runs that
 * turn later, in a worker (src/core/background/queue-response.ts).
 */
export async function openResponseSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: ResponseRunRequest,
): Promise<{ ref: SessionRef; input: ResponseRunRequest['run']['input'] }> {
  const earlier = request.previousResponseId
    ? await previousTranscript(deps, locator, tenant, request.previousResponseId)
    : []
  const history = [...earlier, ...request.run.history]
  const { input } = request.run
  if (input === undefined && history.at(-1)?.role !== 'tool') {
    throw new TurnlineError(
      'invalid_input',
      'input must end with a user message, or with the function_call_output items of the calls the model made',
      { details: { field: 'body.input' } },
    )
  }
  assertAnsweredCalls(history)
  const key = request.idempotencyKey
  const sessionId = key === undefined ? undefined : `resp-${(await sha256(key)).slice(0, 40)}`
  try {
    const ref = await startSession(deps, locator, tenant, parseConfig(request.run.config), {
      source: 'startup',
      history,
      endAfterTurn: true,
      ...(sessionId ? { sessionId } : {}),
    })
    return { ref, input }
  } catch (error) {
    // A retry: the session of this key exists, and its turn answers as it did.
    if (!(sessionId && isTurnlineError(error, 'conflict'))) throw error
    return { ref: await locator.locate(tenant, sessionId), input }
  }
}

/** The whole transcript of a response of this tenant (404 for any other session). */
async function previousTranscript(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  responseId: string,
): Promise<HistoryMessage[]> {
  const sessionId = sessionIdOf(responseId)
  const missing = new TurnlineError('not_found', `no response ${responseId}`, {
    details: { field: 'body.previous_response_id' },
  })
  if (sessionId === undefined) throw missing
  let snapshot: Awaited<ReturnType<ServiceDeps['sessions']['open']>>
  try {
    snapshot = await deps.sessions.open(await locator.locate(tenant, sessionId))
  } catch (error) {
    if (isTurnlineError(error, 'not_found')) throw missing
    throw error
  }
  if (!responseRecordOf(parseEngineState(snapshot.state).config)) throw missing
  return snapshot.history
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('')
}

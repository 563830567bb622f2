import { parseEngineState } from '../../contract/engine-state.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { assertAnsweredCalls } from '../../contract/open-responses-history.ts'
import { responseRecordOf } from '../../contract/open-responses-record.ts'
import type { ResponseRunRequest, ResponseRunResult } from '../../contract/open-responses-run.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { sha256Hex } from '../../shared/sha256-hex.ts'
import { SessionImages } from '../../store/session-images.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { admitStep } from '../engine/admit-step.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { parseConfig, startSession } from '../session/create-session.ts'
import { deleteSession } from '../session/delete-session.ts'
import { assertSameConfig } from '../session/retried-config.ts'
import type { TurnOptions } from '../session-api.ts'
import { announcingStart } from '../turn/announced-start.ts'
import { stepTurn } from '../turn/step-turn.ts'
import { withConversationDigest } from './conversation-digest.ts'
import { responseIdOf, sessionIdOf } from './response-record.ts'

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
  sent: ResponseRunRequest,
  options: TurnOptions = {},
): Promise<ResponseRunResult> {
  return admitStep(deps, tenant, undefined, async (admitted) => {
    const request = { ...sent, run: await withConversationDigest(sent.run) }
    const history = await seededHistoryOf(deps, locator, tenant, request)
    const { input } = request.run
    const key = request.idempotencyKey
    const config = parseConfig(request.run.config)
    const kept = responseRecordOf(config)?.store !== false
    if (!kept && key !== undefined) {
      throw new TurnlineError(
        'invalid_input',
        'store: false keeps nothing to answer a retry with: send an Idempotency-Key only with store: true (the default)',
        { details: { field: 'header.idempotency-key' } },
      )
    }
    const { timeLeft } = options
    const ref = await responseSession(deps, locator, tenant, { config, history, key, timeLeft })
    const started: ThreadEvent = { type: 'thread.started', thread_id: ref.sessionId }
    // Announced with the turn's first event: a retry refused before it (409 session_busy while
    // the key's first request runs) is a plain error answer, not a stream ending response.failed.
    const turn = await stepTurn(
      deps,
      ref,
      input === undefined ? {} : { input },
      {
        ...announcingStart(options, started),
        ...(key === undefined ? {} : { idempotencyKey: key }),
      },
      admitted,
    ).catch((error: unknown) => {
      throw namingRunning(error, responseIdOf(ref.sessionId))
    })
    const result: ResponseRunResult = {
      session_id: ref.sessionId,
      events: [started, ...turn.events],
      status: turn.status,
    }
    Object.assign(result, await usageOf(deps, ref, turn.status))
    // store: false: nothing of the response is kept once it ends (its events are in hand; its
    // transcript too when the caller keeps it in memory, images loaded).
    if (!kept) {
      if (request.keepTranscript) result.transcript = await transcriptOf(deps, ref)
      await deleteSession(deps, locator, tenant, ref.sessionId)
    }
    return result
  })
}

/**
 * What the response reports of its session's state: the reasoning tokens (the response is its
 * session's one turn, so the session's are the response's); of a turn that stays open on the
 * client's calls, its usage so far (in the open turn) and that it waits on them.
 */
async function usageOf(
  deps: ServiceDeps,
  ref: SessionRef,
  status: ResponseRunResult['status'],
): Promise<Pick<ResponseRunResult, 'reasoning_tokens' | 'usage' | 'waitingOnClient'>> {
  const state = parseEngineState((await deps.sessions.open(ref)).state)
  const reasoning = state.reasoning_tokens ? { reasoning_tokens: state.reasoning_tokens } : {}
  if (status !== 'waiting') return reasoning
  const open = state.open_turn
  const waitingOnClient = open?.waiting?.resume.client_call_id !== undefined
  return { ...reasoning, ...(open ? { usage: open.usage } : {}), waitingOnClient }
}

/**
 * A keyed retry refused while the key's first request runs (409 `session_busy`) names the
 * response that runs, `details.response_id`: a client can follow it (`GET /v1/responses/{id}`
 * with `stream=true`) instead of sending the request again until it has finished.
 */
function namingRunning(error: unknown, responseId: string): unknown {
  if (!isTurnlineError(error, 'session_busy')) return error
  return new TurnlineError('session_busy', `response ${responseId} is running: ${error.message}`, {
    details: { ...error.details, response_id: responseId },
    ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
    cause: error,
  })
}

/**
 * The conversation the session starts with: the previous response's transcript, then the
 * input's items; it must leave a turn something to answer (a user message, or call outputs).
 */
async function seededHistoryOf(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: ResponseRunRequest,
): Promise<HistoryMessage[]> {
  let earlier: HistoryMessage[]
  try {
    earlier =
      request.previousTranscript ??
      (request.previousResponseId
        ? await previousTranscript(deps, locator, tenant, request.previousResponseId)
        : [])
  } catch (error) {
    // A keyed retry of a response whose previous response was deleted since: its session holds
    // the conversation, and the retry is answered from it (or refused, if it is another request).
    if (await keyedSessionStands(locator, tenant, request, error)) return []
    throw error
  }
  // A compaction item in the input stands for the whole conversation before it.
  const history = [...(request.run.compacted ? [] : earlier), ...request.run.history]
  if (request.run.input === undefined && history.at(-1)?.role !== 'tool') {
    throw new TurnlineError(
      'invalid_input',
      'input must end with a user message, or with the function_call_output items of the calls the model made',
      { details: { field: 'body.input' } },
    )
  }
  assertAnsweredCalls(history)
  return history
}

/** Whether `error` is the 404 of a previous response and the session of the request's key stands. */
async function keyedSessionStands(
  locator: SessionLocator,
  tenant: string,
  request: ResponseRunRequest,
  error: unknown,
): Promise<boolean> {
  const key = request.idempotencyKey
  if (key === undefined || !isTurnlineError(error, 'not_found')) return false
  try {
    await locator.locate(tenant, await responseSessionIdOf(key))
    return true
  } catch (missing) {
    if (isTurnlineError(missing, 'not_found')) return false
    throw missing
  }
}

/**
 * The session of a response, created (or found again: a retry with the same key) and seeded
 * with the conversation so far, and the input its one turn runs: what a background response
 * records for a worker to run (src/core/background/queue-response.ts).
 */
export async function openResponseSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: ResponseRunRequest,
): Promise<{ ref: SessionRef; input: ResponseRunRequest['run']['input'] }> {
  const history = await seededHistoryOf(deps, locator, tenant, request)
  const config = parseConfig(request.run.config)
  const key = request.idempotencyKey
  const ref = await responseSession(deps, locator, tenant, { config, history, key })
  return { ref, input: request.run.input }
}

/** The session of a response recorded under `key` (a retry with it finds it). */
export async function responseSessionIdOf(key: string): Promise<string> {
  return `resp-${(await sha256Hex(key)).slice(0, 40)}`
}

/** A new session for the response; with an Idempotency-Key, the one its first try created. */
async function responseSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  seed: {
    config: SessionConfig
    history: HistoryMessage[]
    key: string | undefined
    timeLeft?: TurnOptions['timeLeft']
  },
): Promise<SessionRef> {
  const { key } = seed
  const sessionId = key === undefined ? undefined : await responseSessionIdOf(key)
  try {
    return await startSession(deps, locator, tenant, seed.config, {
      source: 'startup',
      history: seed.history,
      keepLongTexts: true,
      endAfterTurn: true,
      timeLeft: seed.timeLeft,
      ...(sessionId ? { sessionId } : {}),
    })
  } catch (error) {
    // A retry: the session of this key exists, and its turn answers as it did, if it is the
    // same request.
    if (!(sessionId && isTurnlineError(error, 'conflict'))) throw error
    const ref = await locator.locate(tenant, sessionId)
    const stored = parseEngineState((await deps.sessions.open(ref)).state).config
    assertSameConfig(stored, seed.config)
    return ref
  }
}

/** The whole transcript of a response of this tenant (404 for any other session). */
export async function previousTranscript(
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
  let ref: SessionRef
  try {
    ref = await locator.locate(tenant, sessionId)
    snapshot = await deps.sessions.open(ref)
  } catch (error) {
    if (isTurnlineError(error, 'not_found')) throw missing
    throw error
  }
  const state = parseEngineState(snapshot.state)
  if (!responseRecordOf(state.config)) throw missing
  // Its conversation is whole once its thread ended or its turn waits on the client's calls;
  // before that (queued, running, paused) the transcript lacks its input or its answer.
  const waitingOnClient = state.open_turn?.waiting?.resume.client_call_id !== undefined
  if (snapshot.status !== 'completed' && !waitingOnClient) {
    throw new TurnlineError(
      'conflict',
      `response ${responseId} has not ended (it is queued, running or paused): continue it once it has completed`,
      { details: { field: 'body.previous_response_id', response_id: responseId } },
    )
  }
  return loadedHistory(deps, ref, snapshot.history)
}

/** A response session's whole transcript as it stands, its images loaded. */
async function transcriptOf(deps: ServiceDeps, ref: SessionRef): Promise<HistoryMessage[]> {
  return loadedHistory(deps, ref, (await deps.sessions.open(ref)).history)
}

/** Stored images go in loaded: the session that reads them stores them in its own folder. */
function loadedHistory(
  deps: ServiceDeps,
  ref: SessionRef,
  history: HistoryMessage[],
): Promise<HistoryMessage[]> {
  const images = new SessionImages(deps.sessions.objects, deps.sessions.keys(ref).root)
  return images.loadMessages(history)
}

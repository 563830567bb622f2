import type { TurnResponse } from '../../contract/api.ts'
import { parseEngineState, type TurnRecord } from '../../contract/engine-state.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { SessionConfig, SessionConfigInput } from '../../contract/session-config.ts'
import { pausedTurn } from '../../contract/turn-left-open.ts'
import { sha256Hex } from '../../shared/sha256-hex.ts'
import { logFenced } from '../../store/delete-fence.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { finishedAfter, replay } from '../engine/turn-replay.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import { stepTurn } from '../turn/step-turn.ts'
import { parseConfig, startSession } from './create-session.ts'
import { deleteSession } from './delete-session.ts'
import type { EarlierDelivery } from './earlier-delivery.ts'

export interface AutomationRun {
  session_id: string
  /** The delivery was seen before: its session already existed. */
  duplicate: boolean
  turn: TurnResponse
}

export interface AutomationRequest {
  /** Derived from the delivery id by the caller (create-only: a redelivery finds it). */
  sessionId: string
  /** The delivery's id (`webhook-id`): its run's idempotency key derives from it. */
  deliveryId: string
  config: SessionConfigInput
  input: string
  /** The same delivery id was accepted before (the route's replay guard): how far it got. */
  earlier?: EarlierDelivery
  /**
   * Called once the delivery's session stands (created now, or found; never a deleted one),
   * before its turn is run or queued: the route marks the delivery `recorded` then, while the
   * session is still active, so retention cannot prune it before the mark.
   */
  sessionStands?: () => Promise<void>
  /** Run in a request the platform bounds (Lambda): the turn pauses, open, before its end. */
  timeLeft?: InvocationTimeLeft | undefined
}

/**
 * One automation run per delivery, exactly once: the session id is derived from the delivery
 * id, so a redelivery finds the session (create-only) and its first turn, whose idempotency key
 * also derives from the delivery — `delivery/<sha-256 of the id>`, a namespace no caller's
 * Idempotency-Key can reach (they never contain `/`) — and answers the same outcome; a delivery
 * that died midway is finished by the next one. The run ends its thread with that turn
 * (`thread.completed` once the turn completes or fails, also when it finishes later after a
 * wait), so the session is closed and retention can prune it.
 *
 * A turn that paused (before the platform's timeout, or for the quota) is continued by the next
 * delivery of the same id, once: each pause's continuation has its own key, derived from the
 * delivery's and the paused answer's last batch (`deliveryStep`), so a redelivery replays what
 * ran and runs only the step after the last pause.
 */
export async function triggerAutomation(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: AutomationRequest,
): Promise<AutomationRun> {
  const duplicate = !(await deliverySession(deps, locator, tenant, request))
  const ref = await locator.locate(tenant, request.sessionId)
  const first = await deliveryKey(request.deliveryId)
  const step = duplicate ? await deliveryStep(deps, ref, first) : { key: first }
  if ('finished' in step) {
    return {
      session_id: request.sessionId,
      duplicate,
      turn: await replay(deps, ref, step.finished),
    }
  }
  const { key } = step
  const turn = await stepTurn(deps, ref, key === first ? { input: request.input } : {}, {
    idempotencyKey: key,
    ...(request.timeLeft ? { timeLeft: request.timeLeft } : {}),
  })
  return { session_id: request.sessionId, duplicate, turn }
}

/**
 * The key of the step a redelivery takes: the delivery's own, or, after each answer that paused,
 * its continuation's (`<key>/after-<last batch>`); the first not recorded yet runs, the last
 * recorded replays. A paused turn the tenant finished meanwhile (`POST …/turns` continued it to
 * its end, or `POST …/cancel` ended it: the session is completed) has no continuation to run:
 * the redelivery answers that end, the batches after the pause, `terminal` (`finished`).
 */
async function deliveryStep(
  deps: ServiceDeps,
  ref: SessionRef,
  first: string,
): Promise<{ key: string } | { finished: TurnRecord }> {
  const snapshot = await deps.sessions.open(ref)
  const { recent_turns } = parseEngineState(snapshot.state)
  let key = first
  for (let record = recent_turns.find((r) => r.key === key); record && pausedTurn(record); ) {
    const next = `${first}/after-${record.last_batch}`
    const paused = record
    record = recent_turns.find((r) => r.key === next)
    if (!record && snapshot.status === 'completed') {
      return { finished: finishedAfter(paused, next, snapshot.lastBatch) }
    }
    if (!record) return { key: next }
    key = next
  }
  return { key }
}

/**
 * The delivery's session, before its turn is run or queued; true when it is created now. An
 * earlier acceptance of the same delivery id that saw its session stand: found, never created,
 * 404 not_found once gone (deleted, or pruned). One that never said so may have stopped before
 * the session, or after it: created, or found (as for a redelivery) — unless it was deleted
 * since, which its log's marker tells (409): a replay after the deletion never runs again. A
 * session created now whose log holds that marker is the deleted one — its deletion landed
 * between that check and the creation, or the guard forgot the delivery id: it is erased again
 * and refused (409) before its turn, so the model is never called for it. A pointer this process
 * cached before another instance deleted the session is not trusted.
 */
export async function deliverySession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: Omit<AutomationRequest, 'input'>,
): Promise<boolean> {
  const { sessionId } = request
  if (request.earlier !== undefined) locator.forget(tenant, [sessionId])
  if (request.earlier === 'recorded') {
    await locator.locate(tenant, sessionId)
    return false
  }
  const config = parseConfig(request.config)
  const keys = deps.sessions.keys({ tenant, workspace: config.workspace, sessionId })
  if (request.earlier === 'unrecorded' && (await logFenced(deps.sessions.objects, keys))) {
    throw deletedDelivery(sessionId)
  }
  const created = await startDelivery(deps, locator, tenant, config, request)
  if (created && (await logFenced(deps.sessions.objects, keys))) {
    await deleteSession(deps, locator, tenant, sessionId).catch((error: unknown) => {
      serviceLog(deps)({ msg: 'erasing a deleted delivery session failed', error: String(error) })
    })
    throw deletedDelivery(sessionId)
  }
  await request.sessionStands?.()
  return created
}

/** Creates the delivery's session; false when it exists already (create-only). */
async function startDelivery(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  config: SessionConfig,
  { sessionId, timeLeft }: Pick<AutomationRequest, 'sessionId' | 'timeLeft'>,
): Promise<boolean> {
  try {
    await startSession(deps, locator, tenant, config, {
      source: 'startup',
      sessionId,
      endAfterTurn: true,
      timeLeft,
    })
    return true
  } catch (error) {
    if (!isTurnlineError(error, 'conflict')) throw error
    return false
  }
}

function deletedDelivery(sessionId: string): TurnlineError {
  return new TurnlineError(
    'conflict',
    `this delivery ran already and its session ${sessionId} was deleted; it does not run again`,
    { retryable: false },
  )
}

export async function deliveryKey(deliveryId: string): Promise<string> {
  return `delivery/${await sha256Hex(deliveryId)}`
}

import type { TurnResponse } from '../../contract/api.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { SessionConfigInput } from '../../contract/session-config.ts'
import { sha256Hex } from '../../shared/sha256-hex.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { stepTurn } from '../turn/step-turn.ts'
import { parseConfig, startSession } from './create-session.ts'

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
  /**
   * The same signed message was accepted before (the route's replay guard): answer from its
   * session, never create it — 404 not_found once the session is gone.
   */
  existingOnly?: boolean
}

/**
 * One automation run per delivery, exactly once: the session id is derived from the delivery
 * id, so a redelivery finds the session (create-only) and its first turn, whose idempotency key
 * also derives from the delivery — `delivery/<sha-256 of the id>`, a namespace no caller's
 * Idempotency-Key can reach (they never contain `/`) — and answers the same outcome; a delivery
 * that died midway is finished by the next one. The run ends its thread with that turn
 * (`thread.completed` once the turn completes or fails, also when it finishes later after a
 * wait), so the session is closed and retention can prune it.
 */
export async function triggerAutomation(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: AutomationRequest,
): Promise<AutomationRun> {
  let duplicate = request.existingOnly === true
  // A pointer cached before another instance deleted the session must not hide that it is gone.
  if (duplicate) locator.forget(tenant, [request.sessionId])
  else if (!(await createdNow(deps, locator, tenant, request))) duplicate = true
  const ref = await locator.locate(tenant, request.sessionId)
  const turn = await stepTurn(
    deps,
    ref,
    { input: request.input },
    { idempotencyKey: await deliveryKey(request.deliveryId) },
  )
  return { session_id: request.sessionId, duplicate, turn }
}

/** Creates the run's session: false when it existed already (a redelivery). */
async function createdNow(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: AutomationRequest,
): Promise<boolean> {
  try {
    await startSession(deps, locator, tenant, parseConfig(request.config), {
      source: 'startup',
      sessionId: request.sessionId,
      endAfterTurn: true,
    })
    return true
  } catch (error) {
    if (!isTurnlineError(error, 'conflict')) throw error
    return false
  }
}

export async function deliveryKey(deliveryId: string): Promise<string> {
  return `delivery/${await sha256Hex(deliveryId)}`
}

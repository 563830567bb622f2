import type { TurnResponse } from '../../contract/api.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { SessionConfigInput } from '../../contract/session-config.ts'
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

/**
 * One automation run per delivery, exactly once: the session id is derived from the delivery
 * id, so a redelivery finds the session (create-only) and its first turn (an Idempotency-Key)
 * and answers the same outcome; a delivery that died midway is finished by the next one.
 */
export async function triggerAutomation(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: { sessionId: string; config: SessionConfigInput; input: string },
): Promise<AutomationRun> {
  const config = parseConfig(request.config)
  let duplicate = false
  try {
    await startSession(deps, locator, tenant, config, {
      source: 'startup',
      sessionId: request.sessionId,
    })
  } catch (error) {
    if (!isTurnlineError(error, 'conflict')) throw error
    duplicate = true
  }
  const ref = await locator.locate(tenant, request.sessionId)
  const turn = await stepTurn(
    deps,
    ref,
    { input: request.input },
    { idempotencyKey: 'automation-run' },
  )
  return { session_id: request.sessionId, duplicate, turn }
}

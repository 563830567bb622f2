import { systemClock } from '../shared/system-clock.ts'
import type { Clock } from './clock.ts'
import type { Coordinator } from './coordinator.ts'

/**
 * ReplayGuard: remembers the signed messages already accepted, by message id (the body's nonce
 * of a runner callback; `webhook-id` under Standard Webhooks), for as long as a replay could
 * still pass the signature's time window. Shared by every instance and kept across restarts
 * when it lives in the coordinator (Redis); an in-process guard only protects one process.
 */
export interface ReplayGuard {
  /** True the first time `messageId` is claimed; false for a replay before `expiresAtMs`. */
  claim(messageId: string, expiresAtMs: number): Promise<boolean>
}

/** The shortest record kept, so a message signed at the edge of its window is still caught. */
const MIN_TTL_MS = 1000

/**
 * A ReplayGuard on the Coordinator's `claimOnce` (`SET NX PX` in Redis): every instance sees
 * the same claims, and they outlive restarts. `scope` keeps the ids of different message kinds
 * apart (`runner-callback` → `runner-callback:<id>`).
 */
export function coordinatorReplayGuard(
  coordinator: Coordinator,
  scope: string,
  clock: Clock = systemClock,
): ReplayGuard {
  return {
    claim: (messageId, expiresAtMs) =>
      coordinator.claimOnce(
        `${scope}:${messageId}`,
        Math.max(MIN_TTL_MS, Math.ceil(expiresAtMs - clock.now())),
      ),
  }
}

import type { Clock } from '../src/ports/clock.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { ReplayGuard } from '../src/ports/replay-guard.ts'
import { systemClock } from '../src/shared/system-clock.ts'

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

/** The app's replay guards on the coordinator: runner callbacks and webhook deliveries. */
export function replayGuardsOf(coordinator: Coordinator) {
  return {
    replayGuard: coordinatorReplayGuard(coordinator, 'runner-callback'),
    webhookReplayGuard: coordinatorReplayGuard(coordinator, 'webhook-delivery'),
  }
}

import type { Clock } from '../src/ports/clock.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { DeliveryGuard } from '../src/ports/delivery-guard.ts'
import type { ReplayGuard } from '../src/ports/replay-guard.ts'
import { systemClock } from '../src/shared/system-clock.ts'
import { DEFAULT_WEBHOOK_ID_RETENTION_SECONDS } from './http/webhook-guards.ts'

/** The shortest record kept, so a message signed at the edge of its window is still caught. */
const MIN_TTL_MS = 1000

function ttlUntil(expiresAtMs: number, clock: Clock): number {
  return Math.max(MIN_TTL_MS, Math.ceil(expiresAtMs - clock.now()))
}

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
      coordinator.claimOnce(`${scope}:${messageId}`, ttlUntil(expiresAtMs, clock)),
  }
}

/**
 * A DeliveryGuard on the same claims: a message's acceptance is the claim of `<scope>:<id>`,
 * its recorded work the claim of `<scope>-recorded:<id>` (each `SET NX PX`, to the same expiry),
 * which a claim that loses reads (`isClaimed`). A first delivery costs two round trips (the
 * claim, then the mark), a replay of a recorded one two (the claim and the read).
 */
export function coordinatorDeliveryGuard(
  coordinator: Coordinator,
  scope: string,
  clock: Clock = systemClock,
): DeliveryGuard {
  const ttl = (expiresAtMs: number) => ttlUntil(expiresAtMs, clock)
  return {
    async claim(messageId, expiresAtMs) {
      if (await coordinator.claimOnce(`${scope}:${messageId}`, ttl(expiresAtMs))) return 'first'
      const recorded = await coordinator.isClaimed(`${scope}-recorded:${messageId}`)
      return recorded ? 'recorded' : 'unrecorded'
    },
    async recorded(messageId, expiresAtMs) {
      await coordinator.claimOnce(`${scope}-recorded:${messageId}`, ttl(expiresAtMs))
    },
  }
}

/**
 * The app's replay guards on the coordinator: runner callbacks, and webhook delivery ids kept
 * `webhookIdRetentionSeconds` (TURNLINE_WEBHOOK_ID_RETENTION_SECONDS).
 */
export function replayGuardsOf(
  coordinator: Coordinator,
  webhookIdRetentionSeconds = DEFAULT_WEBHOOK_ID_RETENTION_SECONDS,
): AppReplayGuards {
  return {
    replayGuard: coordinatorReplayGuard(coordinator, 'runner-callback'),
    webhookReplayGuard: coordinatorDeliveryGuard(coordinator, 'webhook-delivery'),
    webhookIdRetentionSeconds,
  }
}

export interface AppReplayGuards {
  replayGuard: ReplayGuard
  webhookReplayGuard: DeliveryGuard
  /** How long the webhook route has its guard remember an accepted delivery id. */
  webhookIdRetentionSeconds: number
}

import { envInteger } from '../../src/contract/env-values.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { WEBHOOK_TOLERANCE_SECONDS } from '../../src/contract/standard-webhooks.ts'
import type { DeliveryGuard } from '../../src/ports/delivery-guard.ts'
import type { AuthFailureLimit } from './auth-throttle.ts'
import { clientAddress, type PeerAddress } from './client-address.ts'
import {
  type CountedBucket,
  failureCounter,
  perMinuteRule,
  throttledError,
} from './failure-counter.ts'

/**
 * What guards `POST /v1/webhooks/:name` besides the signature (docs/http-api.md, POST /v1/webhooks/:name):
 * the accepted delivery ids and whether their sessions stood, remembered in the coordinator
 * (`coordinatorDeliveryGuard`) for `idRetentionSeconds`, so a delivery id that ran is never run
 * twice, whatever became of its session, and a resent one whose session never stood still runs;
 * and the failed signature checks, counted as failed authentications are
 * (functions/http/auth-throttle.ts).
 */
export interface WebhookGuards {
  replayGuard: DeliveryGuard
  /** How long an accepted delivery id is remembered (TURNLINE_WEBHOOK_ID_RETENTION_SECONDS). */
  idRetentionSeconds: number
  failures: AuthFailureLimit
  peer?: PeerAddress | undefined
  log: (entry: Record<string, unknown>) => void
}

/** Seconds a signed message is remembered past its window: clocks of instances and senders apart. */
export const WEBHOOK_CLOCK_SKEW_SECONDS = 60

/** A webhook may fail this many times as often as one address. */
const ENDPOINT_FACTOR = 5

/**
 * Failed signature checks take a token from a bucket of the client address and one of the
 * webhook. While the address's is empty its deliveries are refused (429) before their body is
 * read, a valid one included, as a failing address's requests are with keys; the webhook's
 * only turns its failures into 429s, never a valid delivery: its name is no secret, so
 * refusing its deliveries would let anyone stop the hook.
 */
export function webhookFailures(guards: WebhookGuards) {
  const { failures } = guards
  const counter = failureCounter(failures, guards.log)
  const perAddress = perMinuteRule(failures.perMinute)
  const perEndpoint = perMinuteRule(failures.perMinute * ENDPOINT_FACTOR)
  return {
    /** The delivery's buckets; throws the 429 while its address is blocked. */
    admit(request: Request, env: unknown, webhook: string): CountedBucket[] {
      const client = clientAddress(request, env, guards.peer, failures.trustedProxies)
      const address = {
        id: `wa:${client}`,
        rule: perAddress,
        fields: { scope: 'webhook_address', client, webhook },
      }
      const waitMs = counter.waitMs([address])
      if (waitMs > 0) throw throttled(waitMs)
      const fields = { scope: 'webhook', client, webhook }
      return [address, { id: `we:${webhook}`, rule: perEndpoint, fields }]
    },
    /** A failed signature check: the 429 when a bucket was empty already, else the 401. */
    async failed(buckets: readonly CountedBucket[], reason: string): Promise<never> {
      const refusedMs = await counter.fail(buckets)
      if (refusedMs > 0) throw throttled(refusedMs)
      throw new TurnlineError('unauthorized', `webhook rejected: ${reason}`)
    },
  }
}

/**
 * How long a delivery id is remembered by default: 4 days, past the 75½ hours of the retry
 * schedule the Standard Webhooks specification gives as its example.
 */
export const DEFAULT_WEBHOOK_ID_RETENTION_SECONDS = 4 * 86_400

/** The shortest retention: a message's signature window and the clock skew. */
export const MIN_WEBHOOK_ID_RETENTION_SECONDS =
  WEBHOOK_TOLERANCE_SECONDS + WEBHOOK_CLOCK_SKEW_SECONDS

/** The guard's variable (functions/env-config.ts spreads it into the environment's schema). */
export const WebhookGuardEnvShape = {
  /** How long an accepted webhook-id is remembered: 6 minutes to 30 days. */
  TURNLINE_WEBHOOK_ID_RETENTION_SECONDS: envInteger(
    MIN_WEBHOOK_ID_RETENTION_SECONDS,
    30 * 86_400,
  ).default(DEFAULT_WEBHOOK_ID_RETENTION_SECONDS),
}

/**
 * When the replay guard may forget a delivery id accepted at `nowMs` in a message signed at
 * `timestamp` (epoch seconds): `retentionSeconds` from now, and never before the message's own
 * signature could pass no more (a timestamp up to the tolerance ahead of this clock).
 */
export function rememberUntilMs(
  timestamp: number,
  retentionSeconds: number,
  nowMs: number,
): number {
  const windowEnds = (timestamp + MIN_WEBHOOK_ID_RETENTION_SECONDS) * 1000
  return Math.max(windowEnds, nowMs + retentionSeconds * 1000)
}

function throttled(waitMs: number) {
  return throttledError(
    waitMs,
    'webhook_signature_failures',
    'too many failed webhook signatures from this client or for this webhook',
  )
}

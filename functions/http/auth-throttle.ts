import type { MiddlewareHandler } from 'hono'
import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type {
  FailureThrottle,
  ThrottleBucket,
  ThrottleRule,
  ThrottleVerdict,
} from '../../src/ports/failure-throttle.ts'
import { sha256Hex } from '../../src/shared/sha256-hex.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import type { AddressRange } from './address-ranges.ts'
import type { AppEnv } from './app-context.ts'
import { type Authenticator, presentedKey } from './auth.ts'
import { BlockedBuckets } from './blocked-buckets.ts'
import { clientAddress, type PeerAddress } from './client-address.ts'

/**
 * Failed authentications are throttled, so keys cannot be guessed at the speed of the server
 * (docs/configuration.md#failed-authentications): a token bucket per client address and one per
 * presented key prefix (so guesses at one key from many addresses are slowed too). A 401 takes
 * a token from both; while either is empty every request of that address, or with that key
 * prefix, is answered 429 with Retry-After *before its key is looked at* — a correct key
 * included, since answering it would tell a guesser when it is right. A success takes nothing.
 *
 * The buckets live in the coordinator (every instance spends the same tokens; one round trip
 * per failure, none per success), or in this process; while the coordinator cannot be reached,
 * each instance counts on its own. An instance remembers which buckets it saw empty until their
 * next token, so a flood is refused without a round trip.
 */
export interface AuthFailureLimit {
  throttle: FailureThrottle
  /** Counts when `throttle` fails (no coordinator reachable): this process's own buckets. */
  fallback: FailureThrottle
  /** Failures per client address per minute (also the burst); a key prefix gets 5×. */
  perMinute: number
  /** Peers whose X-Forwarded-For is believed (TURNLINE_TRUSTED_PROXIES). */
  trustedProxies: readonly AddressRange[]
  /** Instants of the blocked buckets (default: the system clock; the throttles keep their own). */
  clock?: Clock
}

export interface AuthThrottleOptions {
  limit: AuthFailureLimit
  peer?: PeerAddress | undefined
  /** One line per burst (the operator log). */
  log: (entry: Record<string, unknown>) => void
}

/** Characters of a presented key that name its bucket (hashed: no key material is stored). */
const KEY_PREFIX_CHARS = 12
/** A key prefix may fail this many times as often as one address. */
const KEY_PREFIX_FACTOR = 5

/** Authentication of every /v1 request, with failures throttled; sets the tenant. */
export function throttledAuthentication(
  authenticate: Authenticator,
  options: AuthThrottleOptions,
): MiddlewareHandler<AppEnv> {
  const { limit, log } = options
  const clock = limit.clock ?? systemClock
  const blocked = new BlockedBuckets()
  const perAddress = rule(limit.perMinute)
  const perKey = rule(limit.perMinute * KEY_PREFIX_FACTOR)
  let fallbackLoggedAt = Number.NEGATIVE_INFINITY

  const spend = async (buckets: Bucket[]): Promise<ThrottleVerdict[]> => {
    const ask = (throttle: FailureThrottle) => throttle.fail(buckets)
    try {
      return await ask(limit.throttle)
    } catch (error) {
      // Whatever went wrong with the shared counters, a failure is still counted, here.
      const now = clock.now()
      if (now - fallbackLoggedAt > 60_000) {
        fallbackLoggedAt = now
        log({
          ts: new Date(now).toISOString(),
          level: 'warn',
          msg: 'auth_throttle_local',
          error: error instanceof Error ? error.message : String(error),
        })
      }
      return ask(limit.fallback)
    }
  }

  return async (c, next) => {
    const header = c.req.header('authorization')
    const buckets = await bucketsOf(c.req.raw, c.env, header)
    const now = clock.now()
    const waitMs = blocked.waitMs(
      buckets.map((b) => b.id),
      now,
    )
    if (waitMs > 0) throw throttled(waitMs)
    try {
      c.set('tenant', await authenticate(header))
    } catch (error) {
      if (!isTurnlineError(error, 'unauthorized')) throw error
      const verdicts = await spend(buckets)
      let refusedMs = 0
      for (const [i, verdict] of verdicts.entries()) {
        const bucket = buckets[i]
        if (!verdict || !bucket) continue
        if (verdict.retryAfterMs > 0) blocked.block(bucket.id, now + verdict.retryAfterMs, now)
        if (!verdict.counted) refusedMs = Math.max(refusedMs, verdict.retryAfterMs)
        if (verdict.burstStarted) log(burstLine(bucket, verdict))
      }
      if (refusedMs > 0) throw throttled(refusedMs)
      throw error
    }
    await next()
  }

  async function bucketsOf(request: Request, env: unknown, header: string | undefined) {
    const client = clientAddress(request, env, options.peer, limit.trustedProxies)
    const buckets: Bucket[] = [{ id: `a:${client}`, scope: 'address', client, rule: perAddress }]
    const key = header === undefined ? undefined : presentedKey(header)
    if (key !== undefined) {
      const id = await prefixId(key.slice(0, KEY_PREFIX_CHARS))
      buckets.push({ id: `k:${id}`, scope: 'key_prefix', client, rule: perKey })
    }
    return buckets
  }

  function burstLine(bucket: Bucket, verdict: ThrottleVerdict): Record<string, unknown> {
    return {
      ts: new Date(clock.now()).toISOString(),
      level: 'warn',
      msg: 'auth_throttled',
      scope: bucket.scope,
      client: bucket.client,
      ...(bucket.scope === 'key_prefix' ? { key_prefix_id: bucket.id.slice(2) } : {}),
      limit_per_minute: Math.round(60_000 / bucket.rule.refillMs),
      retry_after_seconds: seconds(verdict.retryAfterMs),
    }
  }
}

interface Bucket extends ThrottleBucket {
  scope: 'address' | 'key_prefix'
  client: string
}

function rule(perMinute: number): ThrottleRule {
  return { capacity: perMinute, refillMs: 60_000 / perMinute }
}

/** A stable, short name for a key prefix that does not reveal it: 16 hex of its SHA-256. */
async function prefixId(prefix: string): Promise<string> {
  return (await sha256Hex(prefix)).slice(0, 16)
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

function throttled(waitMs: number): TurnlineError {
  const retryAfter = seconds(waitMs)
  return new TurnlineError(
    'rate_limited',
    `too many failed authentications from this client or with this key; retry in ${retryAfter} s`,
    {
      retryable: true,
      retryAfter,
      details: { reason: 'authentication_failures', retry_after_seconds: retryAfter },
    },
  )
}

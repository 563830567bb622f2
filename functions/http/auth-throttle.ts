import type { MiddlewareHandler } from 'hono'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type { FailureThrottle } from '../../src/ports/failure-throttle.ts'
import { sha256Hex } from '../../src/shared/sha256-hex.ts'
import type { AddressRange } from './address-ranges.ts'
import type { AppEnv } from './app-context.ts'
import { type Authenticator, presentedKey } from './auth.ts'
import { clientAddress, type PeerAddress } from './client-address.ts'
import {
  type CountedBucket,
  failureCounter,
  perMinuteRule,
  throttledError,
} from './failure-counter.ts'

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
  const { limit } = options
  const counter = failureCounter(limit, options.log)
  const perAddress = perMinuteRule(limit.perMinute)
  const perKey = perMinuteRule(limit.perMinute * KEY_PREFIX_FACTOR)

  return async (c, next) => {
    const header = c.req.header('authorization')
    const buckets = await bucketsOf(c.req.raw, c.env, header)
    const waitMs = counter.waitMs(buckets)
    if (waitMs > 0) throw throttled(waitMs)
    try {
      c.set('tenant', await authenticate(header))
    } catch (error) {
      if (!isTurnlineError(error, 'unauthorized')) throw error
      const refusedMs = await counter.fail(buckets)
      if (refusedMs > 0) throw throttled(refusedMs)
      throw error
    }
    await next()
  }

  async function bucketsOf(request: Request, env: unknown, header: string | undefined) {
    const client = clientAddress(request, env, options.peer, limit.trustedProxies)
    const buckets: CountedBucket[] = [
      { id: `a:${client}`, rule: perAddress, fields: { scope: 'address', client } },
    ]
    const key = header === undefined ? undefined : presentedKey(header)
    if (key !== undefined) {
      const id = await prefixId(key.slice(0, KEY_PREFIX_CHARS))
      const fields = { scope: 'key_prefix', client, key_prefix_id: id }
      buckets.push({ id: `k:${id}`, rule: perKey, fields })
    }
    return buckets
  }
}

/** A stable, short name for a key prefix that does not reveal it: 16 hex of its SHA-256. */
async function prefixId(prefix: string): Promise<string> {
  return (await sha256Hex(prefix)).slice(0, 16)
}

function throttled(waitMs: number) {
  return throttledError(
    waitMs,
    'authentication_failures',
    'too many failed authentications from this client or with this key',
  )
}

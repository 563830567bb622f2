import { MemoryFailureThrottle } from '../../adapters/memory/memory-failure-throttle.ts'
import type { IoDeadline } from '../../adapters/shared/io-deadline.ts'
import { UpstashFailureThrottle } from '../../adapters/upstash/upstash-failure-throttle.ts'
import type { FailureThrottle } from '../../src/ports/failure-throttle.ts'
import {
  isUpstashConfigured,
  type RedisKeyspace,
  redisNamespaceOf,
  upstashOf,
} from '../coordinator-choice.ts'
import { ConfigError, type EnvConfig } from '../env-config.ts'
import type { AuthFailureLimit } from '../http/auth-throttle.ts'
import { isMultiTenantEnv } from './tenancy-env.ts'

/**
 * How failed authentications are counted (functions/http/auth-throttle.ts): in the
 * coordinator's Redis when there is one (Upstash, or REDIS_URL through the entry's TCP client),
 * so every instance spends the same tokens, else in this process; failed webhook signatures
 * are counted the same way. None without keys or webhooks: nothing is authenticated then.
 */
export function authFailureLimit(
  config: EnvConfig,
  deadline: IoDeadline,
  backends: {
    redisThrottle?: ((url: string, keyspace: RedisKeyspace) => FailureThrottle) | undefined
    fetch?: typeof fetch | undefined
  },
): AuthFailureLimit | undefined {
  if (!isMultiTenantEnv(config) && config.TURNLINE_WEBHOOKS === undefined) return undefined
  const fallback = new MemoryFailureThrottle()
  return {
    throttle: sharedThrottle(config, deadline, backends) ?? fallback,
    fallback,
    perMinute: config.TURNLINE_AUTH_FAILURES_PER_MINUTE,
    trustedProxies: config.TURNLINE_TRUSTED_PROXIES ?? [],
  }
}

function sharedThrottle(
  config: EnvConfig,
  deadline: IoDeadline,
  backends: Parameters<typeof authFailureLimit>[2],
): FailureThrottle | undefined {
  const namespace = redisNamespaceOf(config)
  if (isUpstashConfigured(config)) {
    return new UpstashFailureThrottle({ ...upstashOf(config, backends), deadline, namespace })
  }
  if (config.REDIS_URL === undefined) return undefined
  const { redisThrottle } = backends
  if (!redisThrottle) {
    throw new ConfigError([
      'REDIS_URL: this runtime has no TCP Redis client for counting failed authentications; use Upstash',
    ])
  }
  return redisThrottle(config.REDIS_URL, { deadline, namespace })
}

import { MemoryCoordinator } from '../adapters/memory/memory-coordinator.ts'
import type { IoDeadline } from '../adapters/shared/io-deadline.ts'
import { redisKeyPrefix } from '../adapters/shared/redis-namespace.ts'
import { UpstashCoordinator } from '../adapters/upstash/upstash-coordinator.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import {
  DurableIntentsCoordinator,
  sessionIntentFolders,
} from '../src/store/durable-intents-coordinator.ts'
import { SessionLocator } from '../src/store/session-locator.ts'
import type { SessionStore } from '../src/store/session-store.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'
import { storeKindOf } from './store-choice.ts'

/**
 * Why sessions in a bucket cannot be served without Upstash (or REDIS_URL) where every request
 * may reach another instance: each would keep its own leases, idempotency records, replay
 * guards and counters, so a retried turn, a replayed webhook delivery or two requests at once
 * could run a turn twice, and no tenant limit would hold.
 */
function sharedCoordinatorRequired(tcp: boolean, where: string): string {
  const redis = tcp
    ? 'UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or REDIS_URL'
    : 'UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN'
  return (
    `${redis}: required with S3_BUCKET ${where} at once, ` +
    'and each would keep its own leases, idempotency records, replay guards and limits, so a ' +
    'retried or concurrent request could run a turn twice'
  )
}

/** How an entry's Redis clients are set up: each call's deadline, the deployment's key prefix. */
export interface RedisKeyspace {
  deadline: IoDeadline
  /** The prefix of every key (`redisKeyPrefix`): `turnline:`, or `turnline:ns:<name>:`. */
  namespace: string
}

/** The key prefix of this deployment in Redis (TURNLINE_REDIS_NAMESPACE; docs/deploy/several-instances.md). */
export function redisNamespaceOf(config: EnvConfig): string {
  return redisKeyPrefix(config.TURNLINE_REDIS_NAMESPACE)
}

/** UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are both set. */
export function isUpstashConfigured(config: EnvConfig): boolean {
  return (
    config.UPSTASH_REDIS_REST_URL !== undefined && config.UPSTASH_REDIS_REST_TOKEN !== undefined
  )
}

/**
 * The connection of the Upstash adapters (coordinator, tenant limiter, failed-authentication
 * counters), on the entry's fetch when it has one (Node: adapters/node-http's fetch, kept alive).
 */
export function upstashOf(
  config: EnvConfig,
  options: { fetch?: typeof fetch | undefined },
): { url: string; token: string; fetch?: typeof fetch } {
  return {
    url: config.UPSTASH_REDIS_REST_URL ?? '',
    token: config.UPSTASH_REDIS_REST_TOKEN ?? '',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  }
}

/**
 * The coordinator of a deployment: Upstash (REST), plain Redis (TCP) or this process. Redis keeps
 * pending intents itself (persistently: docs/deploy/storage.md); the in-process coordinator keeps
 * them in the sessions' folders too, so they survive a restart (DurableIntentsCoordinator).
 */
export function coordinatorOf(
  config: EnvConfig,
  options: {
    /** Many instances at once, each with its own memory (a Worker's isolates, Lambda's). */
    manyInstances?: boolean | undefined
    /** The entry has a TCP Redis client, loaded when REDIS_URL is set (DepsOptions.redisTcp). */
    redisTcp?: unknown
    redisCoordinator?: ((url: string, keyspace: RedisKeyspace) => Coordinator) | undefined
    fetch?: typeof fetch | undefined
  },
  calls: IoDeadline,
  notices: string[],
  sessions: SessionStore,
): Coordinator {
  const namespace = redisNamespaceOf(config)
  if (isUpstashConfigured(config)) {
    return new UpstashCoordinator({ ...upstashOf(config, options), deadline: calls, namespace })
  }
  if (config.REDIS_URL !== undefined) {
    if (!options.redisCoordinator) {
      throw new ConfigError([
        'REDIS_URL: this runtime has no TCP Redis client; use Upstash (UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN)',
      ])
    }
    const shown = new URL(config.REDIS_URL)
    notices.push(`coordination in Redis at ${shown.protocol}//${shown.host} (TCP)`)
    return options.redisCoordinator(config.REDIS_URL, { deadline: calls, namespace })
  }
  // Deno Deploy runs the Deno entry, which cannot otherwise tell it from one `deno serve`.
  const denoDeploy = config.DENO_DEPLOYMENT_ID !== undefined
  if ((options.manyInstances || denoDeploy) && storeKindOf(config, {}) === 's3') {
    throw new ConfigError([
      sharedCoordinatorRequired(
        options.redisTcp !== undefined || options.redisCoordinator !== undefined,
        options.manyInstances
          ? 'here; this runtime serves from many instances'
          : 'on Deno Deploy (DENO_DEPLOYMENT_ID is set); it serves from many isolates',
      ),
    ])
  }
  notices.push(
    'no UPSTASH_REDIS_REST_URL or REDIS_URL: leases and idempotency records live in this ' +
      'process, pending intents in the session store (fine for one process; run several ' +
      'instances only with a shared Redis)',
  )
  return new DurableIntentsCoordinator({
    inner: new MemoryCoordinator(),
    objects: sessions.objects,
    folderOf: sessionIntentFolders(
      sessions,
      new SessionLocator(sessions.objects, '', sessions.locations),
    ),
  })
}

import { MemoryCoordinator } from '../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../adapters/memory/memory-object-store.ts'
import {
  type NamespaceClaim,
  NamespaceClaimSchema,
  newDeploymentId,
  parseDeploymentId,
  serializeDeploymentId,
} from '../src/contract/deployment-identity.ts'
import { isTurnlineError } from '../src/contract/errors.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { DurableIntentsCoordinator } from '../src/store/durable-intents-coordinator.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'

/**
 * One Redis database, several deployments: each keeps its keys under its own prefix
 * (`TURNLINE_REDIS_NAMESPACE`, or `turnline:` without it), and each start claims its prefix for
 * its deployment before it serves — a start that finds the prefix held by another deployment
 * refuses, naming the setting, instead of sharing quotas, idempotency records, leases and
 * webhook runs with it (docs/deploy/several-instances.md says why it is not derived from
 * `S3_PREFIX`). A deployment is its store: the id in `.turnline/deployment.json`, made by the
 * first start, read by every later start and every other instance on the same bucket and
 * prefix (or data dir).
 */
export const DEPLOYMENT_OBJECT = '.turnline/deployment.json'

/** What a deployment claims in Redis, when it has a shared Redis and a store that lasts. */
export interface RedisClaim {
  /** The key prefix claimed (`turnline:` or `turnline:ns:<name>:`). */
  namespace: string
  /** Where the deployment keeps its sessions, for the operator. */
  store: string
}

/** The claim a deployment makes (undefined: a coordinator in the process, or a store in memory). */
export function redisClaimOf(
  config: EnvConfig,
  store: ObjectStore,
  coordinator: Coordinator,
  namespace: string,
): RedisClaim | undefined {
  const inner = coordinator instanceof DurableIntentsCoordinator ? coordinator.inner : coordinator
  if (inner instanceof MemoryCoordinator || store instanceof MemoryObjectStore) return undefined
  const where = config.S3_BUCKET
    ? `s3://${config.S3_BUCKET}/${config.S3_PREFIX ?? ''}`
    : `fs:${config.TURNLINE_DATA_DIR}`
  return { namespace, store: where }
}

/** The store's deployment id: read, or made now (create-only: a concurrent first start wins). */
export async function deploymentIdOf(store: ObjectStore, now = new Date()): Promise<string> {
  const stored = await store.get(DEPLOYMENT_OBJECT)
  if (stored !== null) return parseDeploymentId(stored.body).id
  const made = serializeDeploymentId({
    format: 'turnline.deployment',
    version: 1,
    id: newDeploymentId(),
    created_at: now.toISOString(),
  })
  try {
    await store.put(DEPLOYMENT_OBJECT, new TextEncoder().encode(made), {
      ifNoneMatch: '*',
      contentType: 'application/json',
    })
  } catch (error) {
    if (!isTurnlineError(error, 'conflict')) throw error
  }
  const settled = await store.get(DEPLOYMENT_OBJECT)
  if (settled === null) throw new Error(`${DEPLOYMENT_OBJECT} vanished after it was written`)
  return parseDeploymentId(settled.body).id
}

/**
 * Claims the deployment's Redis namespace (one GET of the store, one Redis call; the first start
 * also writes the id). Resolves with a line for the start notices; throws a ConfigError when the
 * namespace belongs to another deployment.
 */
export async function claimRedisNamespace(
  claim: RedisClaim | undefined,
  store: ObjectStore,
  coordinator: Coordinator,
): Promise<string | undefined> {
  if (claim === undefined) return undefined
  const id = await deploymentIdOf(store)
  const ours: NamespaceClaim = {
    v: 1,
    deployment: id,
    store: claim.store.slice(0, 500),
    claimed_at: new Date().toISOString(),
  }
  const holder = await coordinator.claimNamespace(JSON.stringify(ours))
  const held = readClaim(holder)
  if (held?.deployment === id) {
    return `Redis keys under ${claim.namespace} belong to this deployment (${id})`
  }
  const who = held
    ? `deployment ${held.deployment} (sessions in ${held.store}, claimed ${held.claimed_at})`
    : `something else (${JSON.stringify(holder.slice(0, 80))})`
  throw new ConfigError([
    `TURNLINE_REDIS_NAMESPACE: the Redis keys under ${claim.namespace} belong to ${who}, not to ` +
      `this one (${id}, sessions in ${claim.store}). Two deployments on one database would ` +
      "share each other's quotas, idempotency records, leases and webhook runs. Give this " +
      'deployment its own TURNLINE_REDIS_NAMESPACE (e.g. its S3_PREFIX with / as -); if the ' +
      `other deployment is gone for good, delete the key ${claim.namespace}deployment.`,
  ])
}

function readClaim(text: string): NamespaceClaim | undefined {
  try {
    const parsed = NamespaceClaimSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

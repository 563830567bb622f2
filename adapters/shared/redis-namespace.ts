import { REDIS_NAMESPACE } from '../../src/contract/deployment-identity.ts'
import { TurnlineError } from '../../src/contract/errors.ts'

/**
 * The prefix of every key a deployment keeps in Redis (coordinator and per-tenant limits alike).
 * Without a namespace it is `turnline:`, the keys every release before namespaces wrote, so a
 * running deployment keeps its leases, idempotency records, pending intents and replay guards
 * across an upgrade. With `TURNLINE_REDIS_NAMESPACE=<name>` it is `turnline:ns:<name>:`: no
 * kind of key is named `ns`, and a name holds no `:`, so no key of one namespace can be a key of
 * another or of the default one.
 */
export const DEFAULT_REDIS_PREFIX = 'turnline:'

export function redisKeyPrefix(namespace: string | undefined): string {
  if (namespace === undefined) return DEFAULT_REDIS_PREFIX
  if (!REDIS_NAMESPACE.test(namespace)) {
    throw new TurnlineError(
      'invalid_input',
      `Redis namespace ${JSON.stringify(namespace.slice(0, 80))}: use 1–64 characters from A-Z a-z 0-9 . _ -`,
    )
  }
  return `${DEFAULT_REDIS_PREFIX}ns:${namespace}:`
}

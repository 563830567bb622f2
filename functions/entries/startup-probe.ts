import { permissionRefusal } from '../../adapters/shared/runtime-permission.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { DEPLOYMENT_OBJECT } from '../deployment-claim.ts'
import { ConfigError } from '../env-config.ts'

/**
 * The calls every start makes before it serves — one read of the store (the deployment's id
 * object, which the Redis namespace claim reads anyway) and the claim itself — so that what no
 * retry can fix shows at start, not as a 503 on every turn while `/healthz` answers 200: a
 * permission the runtime refuses (Deno without `--allow-net` for the bucket's host; its message
 * names the flag), a bucket that does not exist, credentials the store rejects. Such a fault
 * becomes a ConfigError naming it, which stops the start (`onStartupError`: the process exits,
 * a Lambda init fails, a Worker answers every request 500 with it). A fault worth retrying (the
 * store is briefly down) is left as it is.
 */
export async function checkedAtStart<T>(
  calls: (store: ObjectStore) => Promise<T>,
  store: ObjectStore,
): Promise<T> {
  try {
    await store.get(DEPLOYMENT_OBJECT)
    return await calls(store)
  } catch (error) {
    throw startupFault(error)
  }
}

function startupFault(error: unknown): unknown {
  const refusal = permissionRefusal(error)
  if (refusal !== undefined) {
    return new ConfigError([`the runtime refused a permission this deployment needs: ${refusal}`])
  }
  if (
    isTurnlineError(error, 'storage_unavailable', 'coordinator_unavailable') &&
    !error.retryable
  ) {
    return new ConfigError([`storage or coordinator unusable: ${error.message}`])
  }
  return error
}

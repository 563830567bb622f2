import {
  CallbackNoticeSchema,
  type DeliveryList,
  type DeliveryView,
} from '../../contract/callback-delivery.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { LoopStore } from '../loops/loop-store.ts'
import type { StoredDelivery } from './callback-outbox.ts'

/** The completion-callback deliveries of a session with their attempts, oldest first. */
export async function listDeliveries(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  sessionId: string,
): Promise<DeliveryList> {
  // From the id pointer, not this process's cache: the list reads no log, so a session another
  // process deleted would otherwise list as empty instead of 404.
  locator.forget(tenant, [sessionId])
  const ref = await locator.locate(tenant, sessionId)
  if (!deps.callbacks) return { deliveries: [] }
  return viewOf(await deps.callbacks.outbox.deliveries(ref))
}

/**
 * A loop's own deliveries: the `loop.stopped` of runs that stopped before any step had a
 * session (the others are listed with their step session). 404 for an unknown loop.
 */
export async function listLoopDeliveries(
  deps: ServiceDeps,
  tenant: string,
  loopId: string,
): Promise<DeliveryList> {
  const { state } = await new LoopStore(deps.sessions).load(tenant, loopId)
  if (!deps.callbacks) return { deliveries: [] }
  const owner = { tenant, workspace: state.workspace, loopId }
  return viewOf(await deps.callbacks.outbox.loopDeliveries(owner))
}

function viewOf(stored: readonly StoredDelivery[]): DeliveryList {
  return {
    deliveries: stored.map(({ record }): DeliveryView => {
      const { format: _f, version: _v, body, batch: _b, claim: _c, ...view } = record
      return { ...view, notice: CallbackNoticeSchema.parse(JSON.parse(body)) }
    }),
  }
}

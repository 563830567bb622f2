import {
  CallbackNoticeSchema,
  type DeliveryList,
  type DeliveryView,
} from '../../contract/callback-delivery.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'

/** The completion-callback deliveries of a session with their attempts, oldest first. */
export async function listDeliveries(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  sessionId: string,
): Promise<DeliveryList> {
  const ref = await locator.locate(tenant, sessionId)
  if (!deps.callbacks) return { deliveries: [] }
  const stored = await deps.callbacks.outbox.deliveries(ref)
  return {
    deliveries: stored.map(({ record }): DeliveryView => {
      const { format: _f, version: _v, body, batch: _b, claim: _c, ...view } = record
      return { ...view, notice: CallbackNoticeSchema.parse(JSON.parse(body)) }
    }),
  }
}

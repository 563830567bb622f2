import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import type { TurnWriter } from '../engine/turn-writer.ts'
import { callbackNotices } from './callback-notices.ts'
import { eventsUrl } from './callback-policy.ts'

/** A batch about to be committed whose notices go to `url`. */
export interface MarkedBatch {
  url: string
  batch: number
}

/**
 * Before the commit that ends an invocation: when the session (or its tenant's default) names a
 * callback URL, the batch's marker is written (create-only) — so a crash right after the commit
 * still has its notices recorded and delivered by the sweep.
 */
export async function markCallbacks(
  deps: ServiceDeps,
  ref: SessionRef,
  writer: TurnWriter,
): Promise<MarkedBatch | undefined> {
  const callbacks = deps.callbacks
  if (!callbacks) return undefined
  const url = writer.state.config.callback?.url ?? callbacks.policy.defaultUrlFor(ref.tenant)
  if (!url) return undefined
  const batch = writer.snapshot.lastBatch + 1
  await callbacks.outbox.mark(ref, batch, url, deps.clock.now())
  return { url, batch }
}

/**
 * After the commit: the batch's notices recorded as pending deliveries, and the delivery loop
 * woken. Best effort: a failure leaves the marker, and the sweep records them.
 */
export async function recordCallbacks(
  deps: ServiceDeps,
  ref: SessionRef,
  writer: TurnWriter,
  marked: MarkedBatch,
  turnId: string,
): Promise<void> {
  const callbacks = deps.callbacks
  if (!callbacks || writer.snapshot.lastBatch !== marked.batch) return
  try {
    const events = writer.dispatcher.all()
    const drafts = callbackNotices(
      {
        sessionId: ref.sessionId,
        turnId,
        firstSeq: writer.snapshot.nextSeq - events.length,
        batch: marked.batch,
        events,
        state: writer.state as unknown as Record<string, unknown>,
        committedAt: new Date(deps.clock.now()).toISOString(),
      },
      eventsUrl(callbacks.policy, ref.sessionId),
    )
    if (drafts.length === 0) {
      await callbacks.outbox.dropMarker(callbacks.outbox.markerKey(ref, marked.batch))
      return
    }
    await callbacks.outbox.record(ref, marked.batch, drafts, marked.url, deps.clock.now())
    await callbacks.policy.wake?.()
  } catch (error) {
    serviceLog(deps)({
      msg: 'callback notices not recorded after the commit; the sweep records them',
      session: ref.sessionId,
      error: String(error),
    })
  }
}

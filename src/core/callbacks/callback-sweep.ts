import { parseStoredBatch } from '../../contract/batch-encoding.ts'
import type { CallbackBatch } from '../../contract/callback-delivery.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { inTenantLanes } from '../../shared/tenant-lanes.ts'
import type { SessionStore } from '../../store/session-store.ts'
import { stateThrough } from '../../store/state-through.ts'
import { callbackNotices } from './callback-notices.ts'
import type { MarkerEntry, StoredDelivery } from './callback-outbox.ts'
import { eventsUrl } from './callback-policy.ts'
import { type CallbackContext, sendDue } from './callback-sender.ts'

export interface SweepResult {
  /** Epoch ms of the earliest delivery still pending (undefined: nothing pending). */
  nextDueAt?: number
  markers: number
}

const earliest = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b)

/** Tenants whose outbox one sweep works through side by side. */
const LANES_AT_ONCE = 8

/** When a tenant's lane stops starting deliveries in this sweep (epoch ms). */
interface LaneBudget {
  until: number
}

/**
 * A marker with no delivery records: its writer died between the commit and recording the
 * notices, or is between them now, or its commit never happened. The batch decides: committed →
 * its notices are recorded now (the same keys and ids the writer would have used); absent → the
 * marker is dropped once its grace has passed. Returns when to look again, if ever.
 */
async function recover(
  ctx: CallbackContext,
  sessions: SessionStore,
  entry: MarkerEntry,
): Promise<'recorded' | number | undefined> {
  const marker = await ctx.outbox.readMarker(entry.key)
  if (!marker) return undefined
  const object = await sessions.objects.get(sessions.keys(entry.ref).batch(entry.batch))
  if (!object) return dropAfterGrace(ctx, entry.key, marker)
  const batch = await parseStoredBatch(object.body)
  const drafts = callbackNotices(
    {
      sessionId: entry.ref.sessionId,
      ...(batch.turn_id ? { turnId: batch.turn_id } : {}),
      firstSeq: batch.first_seq,
      batch: entry.batch,
      events: batch.events.map((line) => line.event as ThreadEvent),
      // Version 6 on: the batch holds only the fields it changed; the notice needs the state.
      state:
        batch.version >= 6
          ? await stateThrough(sessions.objects, sessions.keys(entry.ref), entry.batch)
          : (batch.state ?? {}),
      committedAt: batch.committed_at,
    },
    eventsUrl(ctx.policy, entry.ref.sessionId),
  )
  if (drafts.length === 0) {
    await ctx.outbox.dropMarker(entry.key)
    return undefined
  }
  await ctx.outbox.record(entry.ref, entry.batch, drafts, marker.url, ctx.clock.now())
  return 'recorded'
}

/** Delivers what is due of one marker's batch; drops the marker once all of it is final. */
async function settleMarker(
  ctx: CallbackContext,
  sessions: SessionStore,
  entry: MarkerEntry,
  budget: LaneBudget,
): Promise<number | undefined> {
  if (entry.work !== undefined) return settleWork(ctx, entry, entry.work, budget)
  let records = await ctx.outbox.deliveries(entry.ref, entry.batch)
  if (records.length === 0) {
    const recovered = await recover(ctx, sessions, entry)
    if (recovered !== 'recorded') return recovered
    records = await ctx.outbox.deliveries(entry.ref, entry.batch)
  }
  return sendAll(ctx, entry, records, budget)
}

/**
 * A keyed marker (a session's or a loop's own): its `work.failed` or `loop.stopped` delivery is
 * sent when due. With none (its writer died between
 * the two, and will write it again when the work is run again) it is dropped after its grace.
 */
async function settleWork(
  ctx: CallbackContext,
  entry: MarkerEntry,
  work: string,
  budget: LaneBudget,
): Promise<number | undefined> {
  const records = await ctx.outbox.keyedDeliveries(entry, work)
  if (records.length > 0) return sendAll(ctx, entry, records, budget)
  const marker = await ctx.outbox.readMarker(entry.key)
  return marker ? dropAfterGrace(ctx, entry.key, marker) : undefined
}

/** A marker with nothing to send is dropped once its grace has passed; until then, when. */
async function dropAfterGrace(
  ctx: CallbackContext,
  key: string,
  marker: CallbackBatch,
): Promise<number | undefined> {
  const dropAt = Date.parse(marker.created_at) + ctx.policy.markerGraceMs
  if (dropAt > ctx.clock.now()) return dropAt
  await ctx.outbox.dropMarker(key)
  return undefined
}

/**
 * Sends what is due of one marker's deliveries; drops the marker once all of them are final.
 * Past the lane's budget the rest are left for the next sweep (due now).
 */
async function sendAll(
  ctx: CallbackContext,
  entry: MarkerEntry,
  records: readonly StoredDelivery[],
  budget: LaneBudget,
): Promise<number | undefined> {
  let dueAt: number | undefined
  for (const stored of records) {
    const now = ctx.clock.now()
    if (now >= budget.until) return earliest(dueAt, now)
    const outcome = await sendDue(ctx, entry.ref.tenant, stored)
    if (outcome.kind === 'pending') dueAt = earliest(dueAt, outcome.dueAt)
  }
  if (dueAt === undefined) await ctx.outbox.dropMarker(entry.key)
  return dueAt
}

/**
 * One pass over the outbox (every batch marker of the deployment): records notices a crash
 * left unrecorded, sends every delivery that is due and not claimed, drops the markers of
 * finished batches. Any instance may run it at any time; claims keep two from sending the same
 * delivery at once. A marker that fails (the store, a corrupt record) is logged and skipped.
 *
 * Each tenant's markers are a lane of their own (up to LANES_AT_ONCE side by side), and a lane
 * starts no delivery once it has run one attempt's deadline in this pass: what it leaves is due
 * at the next pass. So a receiver that answers nothing, however many notices its tenant piles
 * up, holds back neither another tenant's deliveries nor, by more than about one deadline, the
 * next pass that delivers what was recorded meanwhile.
 */
export async function sweepCallbacks(
  ctx: CallbackContext,
  sessions: SessionStore,
): Promise<SweepResult> {
  const markers = await ctx.outbox.markers()
  let nextDueAt: number | undefined
  await inTenantLanes(
    markers,
    (entry) => entry.ref.tenant,
    LANES_AT_ONCE,
    async (lane) => {
      const budget: LaneBudget = { until: ctx.clock.now() + ctx.policy.timeoutMs }
      for (const entry of lane) {
        const now = ctx.clock.now()
        if (now >= budget.until) {
          nextDueAt = earliest(nextDueAt, now)
          return
        }
        try {
          nextDueAt = earliest(nextDueAt, await settleMarker(ctx, sessions, entry, budget))
        } catch (error) {
          ctx.log({
            level: 'warn',
            msg: 'callback sweep: a batch failed',
            key: entry.key,
            error: String(error),
          })
          nextDueAt = earliest(nextDueAt, ctx.clock.now() + ctx.policy.retry.firstMs)
        }
      }
    },
  )
  return { ...(nextDueAt === undefined ? {} : { nextDueAt }), markers: markers.length }
}

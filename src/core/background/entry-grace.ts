import type { ServiceDeps } from '../engine/service-deps.ts'
import type { LoopEntryKind, LoopStore } from '../loops/loop-store.ts'

/**
 * How long a loop entry whose loop or run is not there yet is left alone. Each entry is written
 * before what it announces: a schedule entry before the loop's pointer and state (`createLoop`),
 * a run entry before the run is saved in the loop state (`startLoopRun`). A pass in between
 * would drop it: a loop's schedule (it would never fire, and its place under
 * TURNLINE_MAX_SCHEDULED_LOOPS would be counted free), or the entry through which a run whose
 * first step record a crash lost is revived. Past it the entry is one a writer that died left,
 * and goes.
 */
export const ENTRY_GRACE_MS = 5 * 60_000

/**
 * Removes `tenant`'s `kind` entry of `loopId`, which a pass found without its loop (or run),
 * unless it was written less than ENTRY_GRACE_MS ago; an entry whose time is unreadable goes.
 */
export async function dropEntryPastGrace(
  deps: ServiceDeps,
  store: LoopStore,
  kind: LoopEntryKind,
  tenant: string,
  loopId: string,
): Promise<void> {
  const writtenAt = await store.entryWrittenAt(kind, tenant, loopId)
  if (writtenAt !== undefined && deps.clock.now() - writtenAt < ENTRY_GRACE_MS) return
  await store.removeEntryRechecked(kind, tenant, loopId, new Date(deps.clock.now()).toISOString())
}

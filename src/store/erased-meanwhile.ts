import { isDeletedMarker } from '../contract/deleted-marker.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import type { Upkept } from './commit-upkeep.ts'
import { listAll } from './list-all.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'

/**
 * For a commit's maintenance that ran on after the turn answered and released its lease
 * (`SessionStore`'s `deferMaintenance`): whether the session was deleted meanwhile by another
 * process, and if so, erases what the maintenance may have written after that deletion listed the
 * folder (a create-only checkpoint, event part, turn index or first manifest would otherwise
 * outlive it). Called after the maintenance's last write. A deletion fences the log with its
 * marker (delete-fence.ts, the highest batch: nothing commits after it) before it lists the
 * folder, so a check that finds no marker after `batch` ran before the fence, the fence before
 * the deletion's listing, and that listing sees every write made before this check; a check that
 * finds the marker erases everything in the folder but the log, which the deletion erases itself
 * down to its marker (and the id pointer, outside the folder, which a deletion cut short keeps).
 */
export async function eraseIfDeletedMeanwhile(
  objects: ObjectStore,
  keys: SessionKeys,
  batch: number,
): Promise<boolean> {
  const later = await listAll(objects, keys.logPrefix, { startAfter: keys.batch(batch) })
  const numbers = later.objects.map(({ key }) => keys.batchNumber(key) ?? -1)
  const last = Math.max(-1, ...numbers)
  if (last <= batch) return false
  const stored = await objects.get(keys.batch(last))
  if (stored === null || !isDeletedMarker(stored.body)) return false
  const { objects: left } = await listAll(objects, keys.root)
  for (const { key } of left) if (!key.startsWith(keys.logPrefix)) await objects.delete(key)
  return true
}

/**
 * `upkeep` (of the commit that left `committed`), then, if it was due to write anything, the check
 * above; the check's failure is upkeep's.
 */
export async function checkedForDeletion(
  objects: ObjectStore,
  keys: SessionKeys,
  committed: SessionSnapshot,
  upkeep: Promise<Upkept>,
): Promise<Upkept> {
  const upkept = await upkeep
  if (upkept.nothingDue) return upkept
  try {
    await eraseIfDeletedMeanwhile(objects, keys, committed.lastBatch)
    return upkept
  } catch (error) {
    return { ...upkept, maintenanceError: upkept.maintenanceError ?? error }
  }
}

import type { Batch } from '../contract/batch.ts'
import { isTurnlineError } from '../contract/errors.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import { parseSessionManifest } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { betweenCalls } from './between-calls.ts'
import { probeLastBatch, readBatches } from './rehydrate.ts'
import { SessionKeys } from './session-ref.ts'
import { batchTitle } from './session-snapshot.ts'

/** The folder's manifest, current; undefined when it is unreadable or the session is gone. */
export async function currentManifest(
  objects: ObjectStore,
  prefix: string,
  folder: string,
): Promise<SessionManifest | undefined> {
  const object = await objects.get(`${folder}manifest.json`)
  if (!object) return undefined
  let manifest: SessionManifest
  try {
    manifest = parseSessionManifest(object.body)
  } catch {
    return undefined // an unreadable manifest is not listed; GET on the session reports why
  }
  if (manifest.status !== 'active') return manifest
  try {
    const keys = new SessionKeys(prefix, {
      tenant: manifest.tenant,
      workspace: manifest.workspace,
      sessionId: manifest.session_id,
    })
    if (keys.root !== folder) return manifest
    return await manifestAsOfLog(objects, keys, manifest)
  } catch (error) {
    // deleted meanwhile (retention): not listed; a damaged log, or a manifest naming another
    // folder, is listed as the manifest says (the listing's tenant check still applies)
    if (isTurnlineError(error, 'not_found')) return undefined
    if (isTurnlineError(error, 'corrupt_data', 'invalid_input')) return manifest
    throw error
  }
}

/**
 * A stored manifest brought up to the session's last committed batch: the log is probed from its
 * `last_batch` and the batches after it are folded in (without writing anything).
 */
export async function manifestAsOfLog(
  objects: ObjectStore,
  keys: SessionKeys,
  manifest: SessionManifest,
): Promise<SessionManifest> {
  const last = await probeLastBatch(objects, keys, manifest.last_batch)
  const later = Array.from(
    { length: last - manifest.last_batch },
    (_, i) => manifest.last_batch + 1 + i,
  )
  return manifestAhead(manifest, await readBatches(objects, keys, later))
}

/** The manifest with `batches` (the ones right after its `last_batch`, in order) folded in. */
export function manifestAhead(
  manifest: SessionManifest,
  batches: readonly Batch[],
): SessionManifest {
  let next = manifest
  for (const batch of batches) {
    let { status, turn_count } = next
    for (const { event } of batch.events) {
      if (event.type === 'thread.completed') status = 'completed'
      if (event.type === 'turn.completed' || event.type === 'turn.failed') turn_count += 1
    }
    const lastSeq = batch.first_seq + batch.events.length - 1
    const title = next.title ?? batchTitle(batch)
    const { between_calls: _before, ...rest } = next
    next = {
      ...rest,
      ...betweenCalls(batch.state, next.between_calls),
      ...(title === undefined ? {} : { title }),
      status,
      turn_count,
      updated_at: batch.committed_at,
      last_batch: batch.batch,
      last_seq: lastSeq,
      event_count: lastSeq + 1 - next.rolled_head_seq,
    }
  }
  return next
}

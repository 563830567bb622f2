import type { Batch } from '../contract/batch.ts'
import { isTurnlineError } from '../contract/errors.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import { parseSessionManifest } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { probeLastBatch, readBatches } from './rehydrate.ts'
import {
  encodeListCursor,
  encodeNewestCursor,
  resumeAfter,
  resumeBefore,
} from './session-list-cursor.ts'
import { SessionKeys } from './session-ref.ts'
import { batchTitle } from './session-snapshot.ts'

type Where = { prefix: string; root: string; workspace: string }
type ManifestPage = { sessions: SessionManifest[]; cursor?: string }

/** How a listing orders sessions: by their ids, which start with their creation time (UTC). */
export type ListOrder = 'newest' | 'oldest'

/**
 * One page of a workspace's sessions, each as its manifest brought up to its last committed
 * batch. An active session's stored manifest lags its log by up to a checkpoint interval (it is
 * not written after every batch), so each active one is probed and the batches after its
 * manifest are folded in; a listing never shows an older turn count or update time than
 * `GET /v1/sessions/:id`. Sessions are read in parallel. Oldest first is the store's own key
 * order (one listing request per page); newest first lists the workspace's session folders (one
 * request per 1,000 sessions) and reads the manifests of the page only.
 */
export async function listSessionManifests(
  objects: ObjectStore,
  where: Where,
  options: { cursor?: string; limit?: number; order?: ListOrder },
): Promise<ManifestPage> {
  if (options.order === 'newest') return newestFirst(objects, where, options)
  const { root, workspace } = where
  const page = await objects.list(root, {
    delimiter: '/',
    limit: options.limit ?? 50,
    ...(options.cursor ? { startAfter: resumeAfter(options.cursor, workspace, root) } : {}),
  })
  const read = await Promise.all(
    page.prefixes.map((folder) => currentManifest(objects, where.prefix, folder)),
  )
  const sessions = read.filter((manifest) => manifest !== undefined)
  const cursor = page.cursor ? encodeListCursor(workspace, page, root) : undefined
  return { sessions, ...(cursor ? { cursor } : {}) }
}

/** A page of the workspace's sessions, the most recently created first. */
async function newestFirst(
  objects: ObjectStore,
  where: Where,
  options: { cursor?: string; limit?: number },
): Promise<ManifestPage> {
  const { root, workspace } = where
  const before = options.cursor === undefined ? undefined : resumeBefore(options.cursor, workspace)
  const { prefixes } = await listAll(objects, root, { delimiter: '/' })
  const ids = prefixes
    .map((folder) => folder.slice(root.length, -1))
    .filter((id) => before === undefined || id < before)
    .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
  const chosen = ids.slice(0, options.limit ?? 50)
  const read = await Promise.all(
    chosen.map((id) => currentManifest(objects, where.prefix, `${root}${id}/`)),
  )
  const sessions = read.filter((manifest) => manifest !== undefined)
  const last = chosen.at(-1)
  const more = ids.length > chosen.length && last !== undefined
  return { sessions, ...(more ? { cursor: encodeNewestCursor(workspace, last) } : {}) }
}

/** The folder's manifest, current; undefined when it is unreadable or the session is gone. */
async function currentManifest(
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
    next = {
      ...next,
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

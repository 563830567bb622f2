import type { Batch } from '../contract/batch.ts'
import { isTurnlineError } from '../contract/errors.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import { parseSessionManifest } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { probeLastBatch, readBatches } from './rehydrate.ts'
import {
  encodeNewestCursor,
  encodeSessionCursor,
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
 * order (one listing request per page, as a rule); newest first lists the workspace's session
 * folders (one request per 1,000 sessions) and reads the manifests of the page only.
 *
 * A folder without a readable manifest — a deleted session keeps its folder with only its
 * deleted-session marker (delete-fence.ts) — is skipped, and the page is filled from the folders
 * after it: a page is empty only when nothing follows, and the cursor names the last session
 * listed, never a folder skipped, so no listing or cursor tells of a deleted session.
 */
export async function listSessionManifests(
  objects: ObjectStore,
  where: Where,
  options: { cursor?: string; limit?: number; order?: ListOrder },
): Promise<ManifestPage> {
  const limit = options.limit ?? 50
  const { root, workspace } = where
  const read = (folders: readonly string[]) =>
    Promise.all(folders.map((folder) => currentManifest(objects, where.prefix, folder)))
  const found: Listed[] = []
  if (options.order === 'newest') {
    const before =
      options.cursor === undefined ? undefined : resumeBefore(options.cursor, workspace)
    const { prefixes } = await listAll(objects, root, { delimiter: '/' })
    // By id (a folder's trailing '/' would sort `abc/` after `abc-1/`).
    const folders = prefixes
      .map((folder) => folder.slice(root.length, -1))
      .filter((id) => before === undefined || id < before)
      .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
      .map((id) => `${root}${id}/`)
    // One more than the page: whether a next page has a session to show.
    for (let at = 0; at < folders.length && found.length <= limit; at += limit + 1) {
      const batch = folders.slice(at, at + limit + 1)
      found.push(...listed(batch, await read(batch)))
    }
  } else {
    // The first request resumes after the client's cursor, the next ones (when a page held
    // deleted sessions' folders) after the store's own continuation.
    let next: { startAfter?: string; cursor?: string } = options.cursor
      ? { startAfter: resumeAfter(options.cursor, workspace, root) }
      : {}
    for (;;) {
      const page = await objects.list(root, { delimiter: '/', limit: limit + 1, ...next })
      found.push(...listed(page.prefixes, await read(page.prefixes)))
      if (found.length > limit || page.cursor === undefined) break
      next = { cursor: page.cursor }
    }
  }
  const shown = found.slice(0, limit)
  const sessions = shown.map((session) => session.manifest)
  const last = shown.at(-1)?.folder.slice(root.length, -1)
  if (found.length <= limit || last === undefined) return { sessions }
  const cursor =
    options.order === 'newest'
      ? encodeNewestCursor(workspace, last)
      : encodeSessionCursor(workspace, last)
  return { sessions, cursor }
}

interface Listed {
  folder: string
  manifest: SessionManifest
}

/** The folders that hold a session, in the order given, with their manifests. */
function listed(folders: readonly string[], manifests: (SessionManifest | undefined)[]): Listed[] {
  return folders.flatMap((folder, i) => {
    const manifest = manifests[i]
    return manifest === undefined ? [] : [{ folder, manifest }]
  })
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

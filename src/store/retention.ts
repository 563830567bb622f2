import { parseSessionManifest } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { assertSegment, sessionPointerKey, workspaceSessionsPrefix } from './session-ref.ts'

/** VT Code RetentionPolicy defaults. */
export interface RetentionPolicy {
  maxSessions: number
  maxAgeDays: number
}
export const DEFAULT_RETENTION: RetentionPolicy = { maxSessions: 50, maxAgeDays: 30 }

export interface RetentionResult {
  deleted: string[]
  kept: number
}

/**
 * Deletes closed sessions of one workspace: first the oldest (by updated_at) beyond
 * `maxSessions`, then any older than `maxAgeDays`. Candidates are session folders with a
 * parseable manifest whose status is not "active" and that are not in `preserve`; anything
 * else (active or current sessions, unparseable manifests, stray files, folders without a
 * manifest) is left untouched. Deletion keys come from the listing of the folder itself,
 * never from ids read inside a manifest; the session's id pointer goes with it.
 */
export async function applyRetention(
  store: ObjectStore,
  location: { prefix: string; tenant: string; workspace: string },
  options: { now: number; preserve?: readonly string[]; policy?: RetentionPolicy },
): Promise<RetentionResult> {
  const policy = options.policy ?? DEFAULT_RETENTION
  const preserve = new Set(options.preserve ?? [])
  const root = workspaceSessionsPrefix(location.prefix, location.tenant, location.workspace)
  const { prefixes } = await listAll(store, root, { delimiter: '/' })

  const candidates: { folder: string; updatedAt: number }[] = []
  for (const folder of prefixes) {
    const name = folder.slice(root.length, -1)
    if (preserve.has(name) || !isSegment(name)) continue
    const object = await store.get(`${folder}manifest.json`)
    if (!object) continue
    try {
      const manifest = parseSessionManifest(object.body)
      const updatedAt = Date.parse(manifest.updated_at)
      if (manifest.status !== 'active' && Number.isFinite(updatedAt)) {
        candidates.push({ folder, updatedAt })
      }
    } catch {
      // not a session folder we understand: leave it alone
    }
  }
  candidates.sort((a, b) => a.updatedAt - b.updatedAt)

  const doomed = new Set<string>()
  const overflow = candidates.length - policy.maxSessions
  for (const candidate of candidates.slice(0, Math.max(0, overflow))) doomed.add(candidate.folder)
  const cutoff = options.now - policy.maxAgeDays * 86_400_000
  for (const candidate of candidates) if (candidate.updatedAt < cutoff) doomed.add(candidate.folder)

  for (const folder of doomed) {
    const sessionId = folder.slice(root.length, -1)
    await deleteSessionFolder(
      store,
      folder,
      sessionPointerKey(location.prefix, location.tenant, sessionId),
    )
  }
  return {
    deleted: [...doomed].map((folder) => folder.slice(root.length, -1)),
    kept: candidates.length - doomed.size,
  }
}

/**
 * Deletes a session folder: its log first, from the last batch down (from the first deletion
 * on, every reader finds the log's tail gone and answers not_found, in every process, cached or
 * not), then the other objects, the manifest (which listings read) and last its id pointer, so
 * a run cut short midway is finished by the next one: retention finds the folder by its
 * manifest, `DELETE /v1/sessions/:id` by the pointer.
 */
export async function deleteSessionFolder(
  store: ObjectStore,
  folder: string,
  pointer: string,
  /** An object left in place: the deleted-session marker (src/store/delete-fence.ts). */
  keep?: string,
): Promise<void> {
  const { objects } = await listAll(store, folder)
  const manifestKey = `${folder}manifest.json`
  const log = objects
    .map(({ key }) => key)
    .filter((key) => key.startsWith(`${folder}log/`) && key !== keep)
    .sort()
    .reverse()
  for (const key of log) await store.delete(key)
  for (const { key } of objects) {
    if (key !== manifestKey && !key.startsWith(`${folder}log/`)) await store.delete(key)
  }
  await store.delete(manifestKey)
  await store.delete(pointer)
}

function isSegment(name: string): boolean {
  try {
    assertSegment('session_id', name)
    return true
  } catch {
    return false
  }
}

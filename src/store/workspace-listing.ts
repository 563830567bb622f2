import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { sessionPointerKey, tenantPrefix, workspaceSessionsPrefix } from './session-ref.ts'

/** One workspace of a tenant and how many sessions it holds. */
export interface WorkspaceCount {
  workspace: string
  sessions: number
}

/** A workspace name (session-config.ts): the tenant's own folders (`.turnline/`) are not ones. */
const WORKSPACE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

/**
 * The tenant's workspaces in name order, each with its number of sessions: the workspace
 * folders of the tenant's folder, and of each the session folders that still have their id
 * pointer (one storage listing per 1,000 sessions, and one for the tenant's pointers). A deleted
 * session — whose folder keeps only its deleted-session marker (delete-fence.ts) — has no
 * pointer and is not counted; one being deleted counts until its deletion has finished (the
 * pointer goes last, so a deletion cut short still finds it). A workspace that holds only
 * artifacts counts 0 sessions; one left with nothing but deleted sessions' markers is not listed.
 */
export async function listWorkspaces(
  objects: ObjectStore,
  prefix: string,
  tenant: string,
): Promise<WorkspaceCount[]> {
  const root = tenantPrefix(prefix, tenant)
  const { prefixes } = await listAll(objects, root, { delimiter: '/' })
  const names = prefixes
    .map((folder) => folder.slice(root.length, -1))
    .filter((name) => WORKSPACE.test(name) && !name.includes('..'))
  const pointers = sessionPointerKey(prefix, tenant, 'x').slice(0, -'x.json'.length)
  const live = new Set(
    (await listAll(objects, pointers)).objects.map(({ key }) =>
      key.slice(pointers.length, -'.json'.length),
    ),
  )
  const counted = await Promise.all(
    names.map(async (workspace) => {
      const sessions = workspaceSessionsPrefix(prefix, tenant, workspace)
      const listed = await listAll(objects, sessions, { delimiter: '/' })
      const ids = listed.prefixes.map((folder) => folder.slice(sessions.length, -1))
      const count = ids.filter((id) => live.has(id)).length
      const shown = count > 0 || (await holdsMore(objects, `${root}${workspace}/`))
      return shown ? [{ workspace, sessions: count }] : []
    }),
  )
  return counted.flat()
}

/** The workspace folder holds something besides session folders (artifacts, exports, …). */
async function holdsMore(objects: ObjectStore, folder: string): Promise<boolean> {
  const top = await objects.list(folder, { delimiter: '/', limit: 2 })
  if (top.objects.length > 0 || top.prefixes.some((p) => p !== `${folder}.vtcode/`)) return true
  const inner = await objects.list(`${folder}.vtcode/`, { delimiter: '/', limit: 2 })
  return inner.objects.length > 0 || inner.prefixes.some((p) => p !== `${folder}.vtcode/sessions/`)
}

import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { tenantPrefix, workspaceSessionsPrefix } from './session-ref.ts'

/** One workspace of a tenant and how many sessions it holds. */
export interface WorkspaceCount {
  workspace: string
  sessions: number
}

/** A workspace name (session-config.ts): the tenant's own folders (`.turnline/`) are not ones. */
const WORKSPACE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

/**
 * The tenant's workspaces in name order, each with its number of sessions: the workspace
 * folders of the tenant's folder, and the session folders of each (one storage listing per
 * 1,000 sessions). A workspace that holds only artifacts counts 0 sessions.
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
  return Promise.all(
    names.map(async (workspace) => {
      const sessions = workspaceSessionsPrefix(prefix, tenant, workspace)
      const listed = await listAll(objects, sessions, { delimiter: '/' })
      return { workspace, sessions: listed.prefixes.length }
    }),
  )
}

import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { applyRetention, type RetentionPolicy } from './retention.ts'
import { assertSegment, assertTenant } from './session-ref.ts'
import { sweepWork } from './work-retention.ts'

export interface SweepResult {
  /** Workspaces whose session folder was examined. */
  workspaces: number
  /** Sessions deleted, per workspace that lost any. */
  deleted: { tenant: string; workspace: string; sessions: string[] }[]
  /** Workspaces the sweep could not finish (it goes on with the others). */
  failed: { tenant: string; workspace: string; error: string }[]
  /** Background work's leftovers deleted: failed records and loop steps' done markers. */
  work?: { failed: number; done: number }
}

/**
 * VT Code's retention policy over every workspace of every tenant: what a scheduled job runs
 * (a Workers cron trigger, an EventBridge schedule, a cron line), because a short-lived
 * invocation never reaches the every-25th-creation pass that a long-running server makes.
 * Tenant and workspace folders come from listings of the store itself; a folder whose name is
 * not a valid segment (such as `.turnline`) or names a reserved tenant (such as the embedded
 * runner's `runner`) is left alone, and so is everything
 * `applyRetention` keeps (active sessions, unreadable manifests, stray files).
 */
export async function sweepRetention(
  store: ObjectStore,
  options: { now: number; prefix?: string; policy?: RetentionPolicy },
): Promise<SweepResult> {
  const prefix = options.prefix ?? ''
  const head = prefix.replace(/^\/+|\/+$/g, '')
  const root = head ? `${head}/` : ''
  const result: SweepResult = { workspaces: 0, deleted: [], failed: [] }
  for (const tenant of await folders(store, root, 'tenant')) {
    for (const workspace of await folders(store, `${root}${tenant}/`, 'workspace')) {
      result.workspaces += 1
      try {
        const { deleted } = await applyRetention(
          store,
          { prefix, tenant, workspace },
          { now: options.now, ...(options.policy ? { policy: options.policy } : {}) },
        )
        if (deleted.length > 0) result.deleted.push({ tenant, workspace, sessions: deleted })
      } catch (error) {
        result.failed.push({
          tenant,
          workspace,
          error: error instanceof Error ? error.message : String(error),
        })
      }
    }
  }
  result.work = await sweepWork(store, { now: options.now, prefix })
  return result
}

/**
 * Names of the folders directly under `parent` that are valid tenant (`assertTenant`: never a
 * reserved name such as the embedded runner's `runner`) or workspace segments.
 */
async function folders(
  store: ObjectStore,
  parent: string,
  level: 'tenant' | 'workspace',
): Promise<string[]> {
  const { prefixes } = await listAll(store, parent, { delimiter: '/' })
  return prefixes
    .map((folder) => folder.slice(parent.length, -1))
    .filter((name) => {
      try {
        if (level === 'tenant') assertTenant(name)
        else assertSegment('folder', name)
        return !name.startsWith('.')
      } catch {
        return false
      }
    })
}

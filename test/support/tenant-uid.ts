import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TenantUidRecordSchema } from '../../adapters/runner/tenant-uids.ts'

/**
 * The uid a tenant's commands run as under the runner with workspaces in `runnerRoot`: its own
 * (from the runner's state) when the runner runs as root, else the runner's user.
 */
export async function tenantUid(runnerRoot: string, tenant: string): Promise<number> {
  if (process.getuid?.() !== 0) return process.getuid?.() ?? -1
  const file = join(runnerRoot, '.runner-state', 'tenant-uids', `${tenant}.json`)
  return TenantUidRecordSchema.parse(JSON.parse(await readFile(file, 'utf8'))).uid
}

import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { STATE_FOLDER } from './exec-state-folder.ts'

/** Sessions whose spools are looked at side by side. */
const AT_ONCE = 32

/**
 * Bytes on disk of a tenant's private spools (`.runner-state/<tenant>/<session>/spools/`: the
 * output of commands started with `private_output`, command hooks), counted in its disk use with
 * its workspaces (disk-quota.ts). The folder is the runner's own, reached by no command, so the
 * runner measures it itself, as `du` counts: the blocks allocated.
 */
export async function privateSpoolBytes(root: string, tenant: string): Promise<number> {
  const tenantState = path.join(root, STATE_FOLDER, tenant)
  const sessions = await namesIn(tenantState)
  let bytes = 0
  for (let i = 0; i < sessions.length; i += AT_ONCE) {
    const counted = sessions.slice(i, i + AT_ONCE).map(async (session) => {
      const spools = path.join(tenantState, session, 'spools')
      let sum = 0
      for (const name of await namesIn(spools)) {
        const stats = await lstat(path.join(spools, name)).catch(() => undefined)
        if (stats?.isFile()) sum += stats.blocks * 512
      }
      return sum
    })
    for (const sum of await Promise.all(counted)) bytes += sum
  }
  return bytes
}

/** The names in a folder; none when it is gone (erased meanwhile) or is no folder. */
export function namesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [])
}

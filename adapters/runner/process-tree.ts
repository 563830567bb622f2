import { readFileSync } from 'node:fs'
import { mkdir, readdir, rm } from 'node:fs/promises'
import path from 'node:path'

/** The first child's first child… `depth` levels below `pid`; undefined when one is missing. */
export function descendant(pid: number, depth: number): number | undefined {
  let at: number | undefined = pid
  for (let level = 0; level < depth && at !== undefined; level++) at = childPids(at)[0]
  return at
}

/** Direct children of a process (Linux /proc); empty where that is not available. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(/\s+/)
      .filter(Boolean)
      .map(Number)
  } catch {
    return []
  }
}

/** Whether a process with this id exists (EPERM: it does, as another user's). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The entries of `folder` that `pattern` names as a process's own (its first group the pid) and
 * whose process is gone: what runners killed before their end left behind. A match without a pid
 * is an older runner's name, gone too; this process's own entries are never listed.
 */
export async function leftByGoneProcesses(folder: string, pattern: RegExp): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[])
  return names.filter((name) => {
    const match = pattern.exec(name)
    if (!match) return false
    const pid = Number(match[1])
    return !(pid === process.pid || (pid > 0 && alive(pid)))
  })
}

/** Folders handed out by freshFolderOfThisProcess in this process, for their names. */
let freshFolders = 0

/**
 * A fresh, empty folder `<name>-<pid>-<n>` in `root` for this call alone: runners started at
 * once on one root (two instances of a server) must not remove each other's probe folders, nor
 * two probes of one process (an egress probe still running after its runner answered ready, and
 * another begun meanwhile) each other's. Such folders left by runners that died are removed; one
 * of this name left by an earlier process of this pid is replaced.
 */
export async function freshFolderOfThisProcess(root: string, name: string): Promise<string> {
  const own = new RegExp(`^${name.replace(/[.]/g, '\\.')}(?:-(\\d+)(?:-\\d+)?)?$`)
  for (const gone of await leftByGoneProcesses(root, own)) {
    await rm(path.join(root, gone), { recursive: true, force: true })
  }
  const folder = path.join(root, `${name}-${process.pid}-${freshFolders++}`)
  await rm(folder, { recursive: true, force: true })
  await mkdir(folder, { recursive: true })
  return folder
}

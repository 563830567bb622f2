/**
 * CPU time of process trees, read from /proc (Linux): for each root, the user + system time of
 * it and every live descendant, plus what their reaped children used (cutime + cstime), so a
 * command the runner launched and waited for is counted too. One scan of /proc serves every
 * root. Resolution: one clock tick (10 ms at the usual 100 Hz), so read it around many turns.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100)

interface Proc {
  ppid: number
  ticks: number
}

function scan(): Map<number, Proc> {
  const procs = new Map<number, Proc>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue // exited while we looked
    }
    // The command name is in parentheses and may hold anything: the fields follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0)
    procs.set(Number(name), { ppid: Number(fields[1]), ticks })
  }
  return procs
}

/** CPU ms used so far by each root's tree (0 for a root that is gone). */
export function treeCpuMs(roots: number[]): number[] {
  const procs = scan()
  const children = new Map<number, number[]>()
  for (const [pid, proc] of procs) {
    const list = children.get(proc.ppid) ?? []
    list.push(pid)
    children.set(proc.ppid, list)
  }
  return roots.map((root) => {
    let ticks = 0
    const pending = [root]
    while (pending.length > 0) {
      const pid = pending.pop() as number
      ticks += procs.get(pid)?.ticks ?? 0
      pending.push(...(children.get(pid) ?? []))
    }
    return ticks * TICK_MS
  })
}

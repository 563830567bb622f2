/**
 * CPU time of process trees, read from /proc (Linux): for each root, the user + system time of
 * it and every live descendant, plus what their reaped children used (cutime + cstime), so a
 * command the runner launched and waited for is counted too. One scan of /proc serves every
 * root. Resolution: one clock tick (10 ms at the usual 100 Hz), so read it around many turns.
 * The /proc reading here is shared with thread-cpu.ts, which splits a tree by thread.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

export const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100)

/** A /proc file's text, or undefined when its process or thread exited while we looked. */
export function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/** The fields of a `stat` line after the name (in parentheses, which may hold anything). */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** utime + stime + cutime + cstime: the process and its reaped children. */
const ownTicks = (fields: string[]) =>
  [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0)

interface Proc {
  ppid: number
  ticks: number
}

function scan(): Map<number, Proc> {
  const procs = new Map<number, Proc>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = readProc(`/proc/${name}/stat`)
    if (stat === undefined) continue
    const fields = statFields(stat)
    procs.set(Number(name), { ppid: Number(fields[1]), ticks: ownTicks(fields) })
  }
  return procs
}

function childrenOf(procs: Map<number, Proc>): Map<number, number[]> {
  const children = new Map<number, number[]>()
  for (const [pid, proc] of procs) {
    const list = children.get(proc.ppid) ?? []
    list.push(pid)
    children.set(proc.ppid, list)
  }
  return children
}

function descendants(root: number, children: Map<number, number[]>): number[] {
  const tree = [root]
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] as number) ?? []))
  return tree
}

/** `root` and its live descendants. */
export function processTree(root: number): number[] {
  return descendants(root, childrenOf(scan()))
}

/** CPU ms used so far by each root's tree (0 for a root that is gone). */
export function treeCpuMs(roots: number[]): number[] {
  const procs = scan()
  const children = childrenOf(procs)
  return roots.map(
    (root) =>
      descendants(root, children).reduce((ticks, pid) => ticks + (procs.get(pid)?.ticks ?? 0), 0) *
      TICK_MS,
  )
}

/** CPU ms used so far by `pid` itself and the children it reaped, not its live descendants. */
export function processCpuMs(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`)
  return stat === undefined ? Number.NaN : ownTicks(statFields(stat)) * TICK_MS
}

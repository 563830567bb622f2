/**
 * CPU time of every thread of a process tree, read from /proc (Linux): for each live process
 * below a root (the root included), each thread's user + system time with its name (`comm`),
 * plus what the process's reaped children used (cutime + cstime). Two snapshots subtracted give
 * what each thread used in between; a thread that ended in between is lost (its time goes to no
 * one), so read around a steady run where threads live long. Resolution: one clock tick.
 */
import { readdirSync } from 'node:fs'
import { processTree, readProc, statFields, TICK_MS } from './process-tree-cpu.ts'

/** One thread's or one process's reaped children's CPU, keyed `pid:tid` (`pid:reaped`). */
export interface ThreadCpu {
  process: string
  thread: string
  ms: number
}

/** Every thread's CPU so far in `root`'s tree, keyed `pid:tid`. */
export function threadCpu(root: number): Map<string, ThreadCpu> {
  const out = new Map<string, ThreadCpu>()
  for (const pid of processTree(root)) {
    const stat = readProc(`/proc/${pid}/stat`)
    if (stat === undefined) continue
    const cmd = (readProc(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean)
    const process = `${pid} ${cmd.slice(0, 3).join(' ').slice(0, 60)}`
    const f = statFields(stat)
    const reaped = (Number(f[13]) + Number(f[14])) * TICK_MS
    out.set(`${pid}:reaped`, { process, thread: '(reaped children)', ms: reaped })
    let tids: string[] = []
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    tids.sort((a, b) => Number(a) - Number(b))
    for (const [ordinal, tid] of tids.entries()) {
      const t = readProc(`/proc/${pid}/task/${tid}/stat`)
      if (t === undefined) continue
      const tf = statFields(t)
      const name = (readProc(`/proc/${pid}/task/${tid}/comm`) ?? '?').trim()
      const ms = (Number(tf[11]) + Number(tf[12])) * TICK_MS
      // Threads in the order they were made (ids grow): a Node process makes the main thread,
      // then V8's platform workers (GC and compiler tasks), then libuv's pool when first used,
      // then each worker thread; `perf record -p` tells them apart by what they run.
      const label = tid === String(pid) ? `${name} (main)` : `${name} #${ordinal}`
      out.set(`${pid}:${tid}`, { process, thread: label, ms })
    }
  }
  return out
}

/** What each thread used between two snapshots, those that used nothing left out. */
export function threadCpuSince(
  before: Map<string, ThreadCpu>,
  after: Map<string, ThreadCpu>,
): ThreadCpu[] {
  const used: ThreadCpu[] = []
  for (const [key, now] of after) {
    const ms = now.ms - (before.get(key)?.ms ?? 0)
    if (ms > 0) used.push({ ...now, ms })
  }
  return used.sort((a, b) => b.ms - a.ms)
}

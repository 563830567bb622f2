import { readdirSync, readFileSync } from 'node:fs'

/** What Linux's /proc says about processes: environments, parents, descendants, liveness. */

function statOf(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (comm) state ppid …": comm may hold spaces and parentheses.
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { state: state ?? '?', ppid: Number(ppid) }
  } catch {
    return undefined
  }
}

/** The environment of a running process, `NAME=value` entries. */
export function environOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
}

/** The command line of a process, its arguments joined by spaces ('' once it is gone). */
export function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}

export function parentOf(pid: number): number | undefined {
  return statOf(pid)?.ppid
}

/** Gone, or a zombie waiting to be reaped (it runs nothing any more). */
export function isGone(pid: number): boolean {
  const stat = statOf(pid)
  return stat === undefined || stat.state === 'Z' || stat.state === 'X'
}

/** Every live process whose command line contains `marker` (on the host: sandboxes included). */
export function processesWith(marker: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (Number.isInteger(pid) && !isGone(pid) && cmdlineOf(pid).includes(marker)) found.push(pid)
  }
  return found
}

/** Every live process below `pid`, at any depth. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry)
    if (!Number.isInteger(child)) continue
    const stat = statOf(child)
    if (!stat || isGone(child)) continue
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), child])
  }
  const found: number[] = []
  const queue = [pid]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

/** Waits for `condition` (polling); fails naming `what` after `ms` (a bound, not a measurement). */
export async function waitFor(
  condition: () => boolean,
  what: () => string,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

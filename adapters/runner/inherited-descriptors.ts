import { closeSync, readdirSync, readFileSync } from 'node:fs'

/** O_CLOEXEC as `/proc/<pid>/fdinfo` shows it in `flags` (octal), on every Linux architecture. */
const O_CLOEXEC = 0o2000000

/** The descriptor of Node's IPC channel when this process was forked with one. */
function ipcChannelFd(): number | undefined {
  const channel: unknown = process.channel
  if (typeof channel !== 'object' || channel === null || !('fd' in channel)) return undefined
  return typeof channel.fd === 'number' ? channel.fd : undefined
}

/**
 * Closes every descriptor above stderr that this process inherited and would pass on to its
 * children: those without close-on-exec. Node (libuv) opens all of its own descriptors
 * close-on-exec, so such a descriptor can only come from whoever started the process — a job
 * runner's pipe, a supervisor's socket, a shell's redirection — and `spawn` never closes it: it
 * reached every command, through bubblewrap (which passes the sandbox every descriptor it gets).
 * Node's IPC channel is left alone (Node marks it close-on-exec itself). Linux only: elsewhere
 * (no `/proc`) nothing is closed. Returns the numbers closed.
 */
export function closeInheritedDescriptors(): number[] {
  let names: string[]
  try {
    names = readdirSync('/proc/self/fdinfo')
  } catch {
    return []
  }
  const keep = ipcChannelFd()
  const closed: number[] = []
  for (const name of names) {
    const fd = Number(name)
    if (!Number.isInteger(fd) || fd <= 2 || fd === keep) continue
    let info: string
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
    } catch {
      continue // the directory listing's own descriptor, closed since
    }
    const flags = /^flags:\s*([0-7]+)\s*$/m.exec(info)?.[1]
    if (flags === undefined || (Number.parseInt(flags, 8) & O_CLOEXEC) !== 0) continue
    closeSync(fd)
    closed.push(fd)
  }
  return closed
}

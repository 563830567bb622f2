/**
 * The requests moto_server noted itself (infra/local/moto-server-lean.py, when started with a
 * request log: `npm run services:start` does, into .tmp/moto-requests.log), read back for one
 * client: those signed with `accessKeyId`. Each request is two lines, `b <id> <ns> <method>
 * <access key id>` when its head was read and `e <id> <ns> <body bytes>` when its answer was
 * written, <ns> on CLOCK_MONOTONIC (process.hrtime.bigint()'s clock). A request whose head was
 * noted but whose end is not yet is waited for: its start is noted before any answer, so once a
 * client has its answers every request it made is found here.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

export interface MotoRequest {
  method: string
  /** CLOCK_MONOTONIC, in milliseconds (process.hrtime.bigint() / 1e6). */
  from: number
  to: number
  /** Bytes of the request's body (NaN: sent chunked, not known). */
  bytes: number
}

const nsToMs = (ns: string) => Number(BigInt(ns)) / 1e6
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Reads `path` from its current end on: what is noted from now on. */
export function motoRequestLog(path: string, accessKeyId: string) {
  const fd = openSync(path, 'r')
  let offset = fstatSync(fd).size
  let rest = ''
  const open = new Map<string, { method: string; from: number }>()
  let done: MotoRequest[] = []

  const readNew = () => {
    const size = fstatSync(fd).size
    if (size <= offset) return
    const buffer = Buffer.alloc(size - offset)
    const read = readSync(fd, buffer, 0, buffer.length, offset)
    offset += read
    const lines = (rest + buffer.subarray(0, read).toString('latin1')).split('\n')
    rest = lines.pop() ?? ''
    for (const line of lines) {
      const [mark, id = '', ns = '0', a = '', b = ''] = line.split(' ')
      if (mark === 'b' && b === accessKeyId) open.set(id, { method: a, from: nsToMs(ns) })
      const started = mark === 'e' ? open.get(id) : undefined
      if (!started) continue
      open.delete(id)
      const bytes = Number(a)
      done.push({ ...started, to: nsToMs(ns), bytes: bytes >= 0 ? bytes : Number.NaN })
    }
  }

  return {
    /** The requests noted since the last call, once each has ended (within `timeoutMs`). */
    async take(timeoutMs = 10_000): Promise<MotoRequest[]> {
      const deadline = performance.now() + timeoutMs
      readNew()
      while (open.size > 0) {
        if (performance.now() > deadline) {
          throw new Error(`moto noted ${open.size} request(s) that did not end in ${timeoutMs} ms`)
        }
        await sleep(1) // its end is noted right after its answer, on moto's thread: a poll or two
        readNew()
      }
      const taken = done
      done = []
      return taken
    },
    close: () => closeSync(fd),
  }
}

/** process.hrtime.bigint() - performance.now(), in milliseconds: to put a performance.now() time on CLOCK_MONOTONIC. */
export function monotonicOffsetMs(): number {
  const mono = process.hrtime.bigint()
  const now = performance.now()
  return Number(mono) / 1e6 - now
}

/**
 * An append the fs store makes on the calling thread instead of a writer thread (fs-append.ts
 * decides which): one that is not synced, to a file that exists, of a few KB — the lines of a
 * commit to events.jsonl and the turn index's new entries. Such an append only reaches the page
 * cache: open, one fstat, a write, close, ≈ 20 µs on a small VM, the kind of write the operator
 * log already makes on the event loop for every request; a round trip to a writer thread costs
 * more than that in messages and wake-ups alone. What can take long stays on the threads: an
 * fsync, a file to create (a new inode can take over 1 ms on a journal-less ext4).
 *
 * The same calls and checks as the writer thread's append (fs-writer-thread-source.ts): the file
 * is opened through its held folder's descriptor path, never through a link (`O_NOFOLLOW`), and
 * must be a regular file of the expected size and version (inode and birth time) before the
 * bytes are written at `at`; a longer file (a torn tail) is cut there.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs'
import type { AppendReply, AppendRequest } from './fs-writer-threads.ts'

const { O_RDWR, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants
const OPEN_EXISTING = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

/** Largest append made on the calling thread. */
export const HERE_MAX_BYTES = 64 * 1024

/** Whether an append of these bytes is made on the calling thread (if its file exists). */
export function appendsHere(bytes: Uint8Array, durable: boolean): boolean {
  return !durable && bytes.byteLength > 0 && bytes.byteLength <= HERE_MAX_BYTES
}

/**
 * Appends as the writer thread would; `undefined` when the file is missing and `ifSize` is 0 (it
 * is to be created: the caller sends the append to a writer thread). Throws the failed call's
 * errno error (ENOENT with `ifSize` 0: a missing folder; ELOOP: a link at the name; EFTYPE: not a
 * regular file).
 */
export function appendHere(
  request: Omit<AppendRequest, 'durable' | 'bytes'> & { bytes: Uint8Array },
): AppendReply | undefined {
  const { path, bytes, at, ifSize, ifVersion } = request
  let fd: number
  try {
    fd = openSync(path, OPEN_EXISTING)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    if (ifSize === 0) return undefined
    return { conflict: true, size: 0, version: undefined }
  }
  try {
    const info = fstatSync(fd, { bigint: true })
    if (!info.isFile()) throw notAFile()
    const size = Number(info.size)
    const version = `${info.ino}.${info.birthtimeNs}`
    if (size !== ifSize || (ifVersion !== undefined && ifVersion !== version)) {
      return { conflict: true, size, version }
    }
    for (let offset = 0; offset < bytes.byteLength; ) {
      offset += writeSync(fd, bytes, offset, bytes.byteLength - offset, at + offset)
    }
    if (at + bytes.byteLength < size) ftruncateSync(fd, at + bytes.byteLength)
    return { conflict: false, size: at + bytes.byteLength, version, created: false }
  } finally {
    try {
      closeSync(fd)
    } catch {
      // Nothing was synced through it: a failed close loses nothing the caller was promised.
    }
  }
}

function notAFile(): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error('not a regular file')
  error.code = 'EFTYPE'
  error.syscall = 'open'
  return error
}

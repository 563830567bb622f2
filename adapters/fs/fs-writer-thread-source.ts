/**
 * The code of an fs writer thread (fs-writer-threads.ts), as a string: an `eval` worker runs
 * unchanged from the sources (tsx), from the esbuild bundle and on Deno, where a worker file
 * next to the module would have to be found and shipped separately.
 *
 * One request: make a temp file in `tmpDir` with `bytes` (fsynced when `durable`), closed; then
 * give it its name. With `linkTo`, `link()` to that path. With `linkInto` (`{ dir, name }`), the
 * whole create-only put without following a link (fs-no-follow.ts): open `dir` with
 * `O_DIRECTORY | O_NOFOLLOW`, check that the path the kernel reports for the descriptor is
 * `dir` (no link on the way), link the temp file as `name` through the descriptor, fsync the
 * folder (when `durable`), close it and remove the temp name. Each step is a synchronous call on
 * this thread, so the whole request costs the event loop one message each way instead of one
 * thread-pool round trip per step. Replies:
 *
 *   { id, temp, synced }                     the temp file is written (and linked, if asked)
 *   { id, temp, synced, linked, folderSynced, tempRemoved, folderSyncError? }
 *                                            linkInto: the name is made (and the folder fsynced)
 *   { id, temp, synced, linkError }          written, but the name could not be made (a missing
 *                                            or linked folder — code EUNVERIFIED when the check
 *                                            failed —, a taken name): the temp file is kept for
 *                                            the caller to place or remove
 *   { id, error }                            the temp file could not be written; none is left
 *
 * Errors travel as { code, message, syscall }.
 */
export const WRITER_THREAD_SOURCE = `
'use strict'
const { parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const { join } = require('node:path')
const { randomUUID } = require('node:crypto')

const plain = (error) => ({
  code: typeof error?.code === 'string' ? error.code : undefined,
  message: String(error?.message ?? error),
  syscall: typeof error?.syscall === 'string' ? error.syscall : undefined,
})

const writeTemp = (tmpDir, bytes, durable) => {
  const temp = join(tmpDir, randomUUID())
  const fd = fs.openSync(temp, 'wx')
  let closed = false
  try {
    let offset = 0
    while (offset < bytes.byteLength) offset += fs.writeSync(fd, bytes, offset)
    if (durable) fs.fsyncSync(fd)
    closed = true
    fs.closeSync(fd)
  } catch (error) {
    if (!closed) {
      try { fs.closeSync(fd) } catch {}
    }
    try { fs.unlinkSync(temp) } catch {}
    throw error
  }
  return temp
}

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants
// Folder fsyncs that cannot be made here, or need not be (see fs-durability.ts).
const CANNOT_SYNC_FOLDER = new Set(['ENOENT', 'EISDIR', 'EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EPERM', 'EACCES', 'EBADF'])

const linkInto = (temp, into, durable) => {
  const dirFd = fs.openSync(into.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
  try {
    if (fs.readlinkSync('/proc/self/fd/' + dirFd) !== into.dir) {
      throw Object.assign(new Error('a link on the way to the folder'), { code: 'EUNVERIFIED' })
    }
    fs.linkSync(temp, '/proc/self/fd/' + dirFd + '/' + into.name)
    if (!durable) return { folderSynced: false }
    try {
      fs.fsyncSync(dirFd)
      return { folderSynced: true }
    } catch (error) {
      if (CANNOT_SYNC_FOLDER.has(error?.code)) return { folderSynced: false }
      return { folderSynced: false, folderSyncError: plain(error) }
    }
  } finally {
    fs.closeSync(dirFd)
  }
}

parentPort.on('message', ({ id, tmpDir, bytes, durable, linkTo, into }) => {
  let temp
  try {
    temp = writeTemp(tmpDir, bytes, durable)
  } catch (error) {
    parentPort.postMessage({ id, error: plain(error) })
    return
  }
  if (linkTo !== undefined) {
    try {
      fs.linkSync(temp, linkTo)
    } catch (error) {
      parentPort.postMessage({ id, temp, synced: durable, linkError: plain(error) })
      return
    }
  }
  if (into !== undefined) {
    let linked
    try {
      linked = linkInto(temp, into, durable)
    } catch (error) {
      parentPort.postMessage({ id, temp, synced: durable, linkError: plain(error) })
      return
    }
    let tempRemoved = false
    try {
      fs.unlinkSync(temp)
      tempRemoved = true
    } catch {}
    parentPort.postMessage({ id, temp, synced: durable, linked: true, tempRemoved, ...linked })
    return
  }
  parentPort.postMessage({ id, temp, synced: durable })
})
`

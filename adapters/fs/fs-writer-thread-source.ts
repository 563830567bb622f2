/**
 * The code of an fs writer thread (fs-writer-threads.ts), as a string: an `eval` worker runs
 * unchanged from the sources (tsx), from the esbuild bundle and on Deno, where a worker file
 * next to the module would have to be found and shipped separately.
 *
 * One request: make a temp file in `tmpDir` with `bytes` (fsynced when `durable`), closed; then,
 * with `linkTo`, give it that name with `link()` and remove the temp name (it plays no part in
 * the object's durability once the object has its own name). Each step is a synchronous call on
 * this thread, so the whole request costs the event loop one message each way instead of one
 * thread-pool round trip per step. Replies:
 *
 *   { id, temp, synced }                    the temp file is written (not linked: none asked)
 *   { id, temp, synced, removed }           written and linked; `removed`: the temp name is gone
 *                                            (else the caller removes it, and sees why not)
 *
 * With `syncFolder` (the descriptor of the folder `linkTo` is in, held open by the caller until
 * it has both replies) and `syncId`, a second reply follows the first: the folder fsynced after
 * the link (the caller meanwhile acts on the name made), so a put needs no thread-pool job:
 *
 *   { id: syncId, folderSynced }             the folder is fsynced
 *   { id: syncId, folderSyncError }          its fsync failed so
 *   { id: syncId, folderSkipped }            no name was made: nothing to sync
 *   { id, temp, synced, linkError }          written, but the link failed: the temp file is
 *                                            kept for the caller to place or remove
 *   { id, error }                            the temp file could not be written; none is left
 *
 * Or one append (`op: 'append'`, fs-append.ts): open `path` (a name in a held folder, looked up
 * from its descriptor; never through a link: O_NOFOLLOW), creating it when `ifSize` is 0 and it
 * is missing, check that it is a regular file, its size and version (inode and birth time), write
 * `bytes` at `at`, cut the file there when it was longer (a torn tail), fsync when `durable`,
 * close. Replies:
 *
 *   { id, size, version, created, synced }   appended; `created`: the file was made now
 *   { id, conflict, size, version }          not the size or version expected (nothing written)
 *   { id, error }                            an I/O error (ENOENT: a missing parent folder;
 *                                            ELOOP: a link at the name; EFTYPE: not a file)
 *
 * Or the last step of a plain or compare-and-swap put (`op: 'replace'`, fs-object-store.ts, run
 * under the key's lock): with `ifMatch`, read the file at `to` (never through a link: O_NOFOLLOW,
 * non-blocking) and compare the sha256 etag of its bytes; then `rename()` the written temp file
 * over `to`. Replies:
 *
 *   { id, renamed: true }                    compared (when asked) and renamed
 *   { id, mismatch: true }                   the file holds other bytes (nothing renamed)
 *   { id, unread }                           the file could not be read as a regular file
 *                                            (missing, a link, an I/O error; nothing renamed):
 *                                            the caller compares the slow way, which says why
 *   { id, renameError }                      compared, but the rename failed
 *
 * Once it listens, the thread sends { ready: true }: the pool queues no write on it before then
 * while another thread is running. Errors travel as { code, message, syscall }. A temp file, and a file created by an append, is
 * fstat'ed before it is closed: its `version` goes back with the reply.
 */
export const WRITER_THREAD_SOURCE = `
'use strict'
const { parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const { join } = require('node:path')
const { createHash, randomUUID } = require('node:crypto')

const plain = (error) => ({
  code: typeof error?.code === 'string' ? error.code : undefined,
  message: String(error?.message ?? error),
  syscall: typeof error?.syscall === 'string' ? error.syscall : undefined,
})

const versionOf = (fd) => {
  const info = fs.fstatSync(fd, { bigint: true })
  return { file: info.isFile(), size: Number(info.size), version: info.ino + '.' + info.birthtimeNs }
}

const writeAll = (fd, bytes, position) => {
  let offset = 0
  while (offset < bytes.byteLength) {
    offset += fs.writeSync(fd, bytes, offset, bytes.byteLength - offset, position + offset)
  }
}

const writeTemp = (tmpDir, bytes, durable) => {
  const temp = join(tmpDir, randomUUID())
  const fd = fs.openSync(temp, 'wx')
  let closed = false
  try {
    writeAll(fd, bytes, 0)
    if (durable) fs.fsyncSync(fd)
    const { version } = versionOf(fd)
    closed = true
    fs.closeSync(fd)
    return { temp, version }
  } catch (error) {
    if (!closed) {
      try { fs.closeSync(fd) } catch {}
    }
    try { fs.unlinkSync(temp) } catch {}
    throw error
  }
}

const { O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants
const OPEN_EXISTING = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
const OPEN_NEW = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY

const openForAppend = (path, ifSize) => {
  try {
    return { fd: fs.openSync(path, OPEN_EXISTING), created: false }
  } catch (error) {
    if (error?.code !== 'ENOENT' || ifSize !== 0) throw error
  }
  try {
    return { fd: fs.openSync(path, OPEN_NEW, 0o666), created: true }
  } catch (error) {
    if (error?.code !== 'EEXIST') throw error
    return { fd: fs.openSync(path, OPEN_EXISTING), created: false }
  }
}

const append = ({ id, path, bytes, at, ifSize, ifVersion, durable }) => {
  let opened
  try {
    opened = openForAppend(path, ifSize)
  } catch (error) {
    if (error?.code === 'ENOENT' && ifSize !== 0) return { id, conflict: true, size: 0 }
    return { id, error: plain(error) }
  }
  const { fd, created } = opened
  try {
    const { file, size, version } = versionOf(fd)
    if (!file) {
      return { id, error: { code: 'EFTYPE', message: 'not a regular file', syscall: 'open' } }
    }
    if (size !== ifSize || (ifVersion !== undefined && ifVersion !== version)) {
      return { id, conflict: true, size, version }
    }
    writeAll(fd, bytes, at)
    if (at + bytes.byteLength < size) fs.ftruncateSync(fd, at + bytes.byteLength)
    if (durable) fs.fsyncSync(fd)
    return { id, size: at + bytes.byteLength, version, created, synced: durable }
  } catch (error) {
    return { id, error: plain(error) }
  } finally {
    try { fs.closeSync(fd) } catch {}
  }
}

const { O_RDONLY } = fs.constants
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

const etagAt = (path) => {
  const fd = fs.openSync(path, READ_FLAGS)
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EFTYPE' })
    return '"' + createHash('sha256').update(fs.readFileSync(fd)).digest('hex') + '"'
  } finally {
    try { fs.closeSync(fd) } catch {}
  }
}

const replace = ({ id, temp, to, ifMatch }) => {
  if (ifMatch !== undefined) {
    let etag
    try {
      etag = etagAt(to)
    } catch (error) {
      return { id, unread: plain(error) }
    }
    if (etag !== ifMatch) return { id, mismatch: true }
  }
  try {
    fs.renameSync(temp, to)
  } catch (error) {
    return { id, renameError: plain(error) }
  }
  return { id, renamed: true }
}

const writeAndLink = ({ id, tmpDir, bytes, durable, linkTo }) => {
  let written
  try {
    written = writeTemp(tmpDir, bytes, durable)
  } catch (error) {
    return { id, error: plain(error) }
  }
  const { temp, version } = written
  if (linkTo === undefined) return { id, temp, version, synced: durable }
  try {
    fs.linkSync(temp, linkTo)
  } catch (error) {
    return { id, temp, version, synced: durable, linkError: plain(error) }
  }
  let removed = true
  try {
    fs.unlinkSync(temp)
  } catch (error) {
    removed = error?.code === 'ENOENT'
  }
  return { id, temp, version, synced: durable, removed }
}

const syncFolderAfter = (id, fd, linked) => {
  if (!linked) return { id, folderSkipped: true }
  try {
    fs.fsyncSync(fd)
    return { id, folderSynced: true }
  } catch (error) {
    return { id, folderSyncError: plain(error) }
  }
}

parentPort.on('message', (request) => {
  if (request.op === 'append') {
    parentPort.postMessage(append(request))
    return
  }
  if (request.op === 'replace') {
    parentPort.postMessage(replace(request))
    return
  }
  const reply = writeAndLink(request)
  parentPort.postMessage(reply)
  if (request.syncId !== undefined) {
    parentPort.postMessage(syncFolderAfter(request.syncId, request.syncFolder, reply.removed !== undefined))
  }
})
parentPort.postMessage({ ready: true })
`

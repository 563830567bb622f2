/**
 * The code of an fs writer thread (fs-writer-threads.ts), as a string: an `eval` worker runs
 * unchanged from the sources (tsx), from the esbuild bundle and on Deno, where a worker file
 * next to the module would have to be found and shipped separately.
 *
 * One request: make a temp file in `tmpDir` with `bytes` (fsynced when `durable`), closed; then,
 * with `linkTo`, give it that name with `link()`. Each step is a synchronous call on this thread,
 * so the whole request costs the event loop one message each way instead of one thread-pool
 * round trip per step. Replies:
 *
 *   { id, temp, synced }                    the temp file is written (and linked, if asked)
 *   { id, temp, synced, linkError }          written, but the link failed: the temp file is
 *                                            kept for the caller to place or remove
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

parentPort.on('message', ({ id, tmpDir, bytes, durable, linkTo }) => {
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
  parentPort.postMessage({ id, temp, synced: durable })
})
`

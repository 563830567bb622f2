/**
 * Worker threads that write the fs store's temp files (fs-writer-thread-source.ts).
 *
 * Writing a temp file through `fs/promises` is four thread-pool round trips (open, write, fsync,
 * close), and a create-only put a fifth (link); each costs the event loop a wake-up and a
 * promise, ≈ 0.1 ms on a small VM. A writer thread makes the same calls synchronously, off the
 * event loop, and answers once: one message each way per put (what it saves a turn is in
 * docs/performance.md).
 *
 * Up to MAX_WRITER_THREADS threads per process, started as writes overlap (a request goes to an
 * idle thread, else to a new one while under the limit, else to the least busy); threads do not
 * keep the process alive while idle. A thread that dies fails its pending requests with an error
 * (whether their files were written is then unknown, as after any I/O error) and is replaced on
 * the next request.
 */
import { Worker } from 'node:worker_threads'
import { WRITER_THREAD_SOURCE } from './fs-writer-thread-source.ts'

/** Most writer threads per process (the thread pool's default size). */
export const MAX_WRITER_THREADS = 4

export interface TempWrite {
  /** Folder of the temp file (on the same filesystem as its final name). */
  tmpDir: string
  /** The bytes; moved to the thread when they fill their buffer (then unusable here). */
  bytes: Uint8Array<ArrayBuffer>
  /** fsync the bytes before answering. */
  durable: boolean
  /** Give the written file this name too (`link()`, fails if the name exists). */
  linkTo?: string | undefined
}

/**
 * The written temp file and its version (inode and birth time: a link or rename keeps it),
 * whether `linkTo` failed (the temp file is then still there), and whether the temp name was
 * removed after the link (`removed`; when not, the caller removes it).
 */
export type TempWritten = {
  temp: string
  version?: string
  linkError?: NodeJS.ErrnoException
  removed?: boolean
}

/** An append for a writer thread (fs-append.ts has the rules). */
export interface AppendRequest {
  path: string
  /** Moved to the thread when they fill their buffer, as for `writeOnThread`. */
  bytes: Uint8Array<ArrayBuffer>
  at: number
  ifSize: number
  ifVersion: string | undefined
  durable: boolean
}

/** Appended (with `created` when the file was made), or not the size or version expected. */
export type AppendReply =
  | { conflict: false; size: number; version: string; created: boolean }
  | { conflict: true; size: number; version: string | undefined }

interface Reply {
  id: number
  temp?: string
  version?: string
  size?: number
  created?: boolean
  conflict?: boolean
  synced?: boolean
  error?: ErrorFields
  linkError?: ErrorFields
  removed?: boolean
}
interface ErrorFields {
  code?: string
  message: string
  syscall?: string
}
interface Pending {
  resolve: (reply: Reply) => void
  reject: (error: Error) => void
}
interface Thread {
  worker: Worker
  pending: Map<number, Pending>
}

const threads: Thread[] = []
let nextId = 0
let fsyncs = 0

/** Writes a temp file on a writer thread; rejects with the errno error of the failed step. */
export async function writeOnThread(request: TempWrite): Promise<TempWritten> {
  const { bytes, tmpDir, durable, linkTo } = request
  const reply = await send({ tmpDir, bytes, durable, linkTo }, bytes)
  if (reply.temp === undefined) throw errnoError({ message: 'fs writer thread sent no file' })
  return {
    temp: reply.temp,
    ...(reply.version === undefined ? {} : { version: reply.version }),
    ...(reply.linkError === undefined ? {} : { linkError: errnoError(reply.linkError) }),
    ...(reply.removed === true ? { removed: true } : {}),
  }
}

/** Appends on a writer thread; rejects with the errno error of the failed step. */
export async function appendOnThread(request: AppendRequest): Promise<AppendReply> {
  const reply = await send({ op: 'append', ...request }, request.bytes)
  const size = reply.size ?? 0
  if (reply.conflict) return { conflict: true, size, version: reply.version }
  if (reply.version === undefined) throw errnoError({ message: 'fs writer thread sent no size' })
  return { conflict: false, size, version: reply.version, created: reply.created === true }
}

function send(message: Record<string, unknown>, bytes: Uint8Array<ArrayBuffer>): Promise<Reply> {
  const thread = pickThread()
  const id = nextId++
  return new Promise((resolve, reject) => {
    if (thread.pending.size === 0) thread.worker.ref()
    thread.pending.set(id, { resolve, reject })
    // Moved, not copied, when the bytes are their buffer's whole content.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    try {
      thread.worker.postMessage({ id, ...message }, whole ? [bytes.buffer] : [])
    } catch (error) {
      settle(thread, { id, error: { message: String(error) } })
    }
  })
}

/** Starts a writer thread ahead of the first write (startup takes tens of ms). */
export function warmWriterThreads(): void {
  if (threads.length === 0) startThread()
}

/** fsyncs made on writer threads in this process (benchmarks count them with their own). */
export function writerThreadFsyncs(): number {
  return fsyncs
}

/** Writer threads running (for tests). */
export function writerThreadCount(): number {
  return threads.length
}

/** Writes sent to a thread and not answered yet (for tests). */
export function pendingThreadWrites(): number {
  return threads.reduce((sum, thread) => sum + thread.pending.size, 0)
}

/** Stops every writer thread; their pending writes fail (for tests of a thread that dies). */
export async function stopWriterThreads(): Promise<void> {
  await Promise.all(threads.map((thread) => thread.worker.terminate()))
}

function pickThread(): Thread {
  let best: Thread | undefined
  for (const thread of threads) {
    if (best === undefined || thread.pending.size < best.pending.size) best = thread
  }
  if (best !== undefined && (best.pending.size === 0 || threads.length >= MAX_WRITER_THREADS)) {
    return best
  }
  return startThread()
}

function startThread(): Thread {
  const worker = new Worker(WRITER_THREAD_SOURCE, { eval: true, name: 'turnline fs writer' })
  worker.unref()
  const thread: Thread = { worker, pending: new Map() }
  worker.on('message', (reply: Reply) => settle(thread, reply))
  const fail = (error: Error) => {
    const index = threads.indexOf(thread)
    if (index >= 0) threads.splice(index, 1)
    const pending = [...thread.pending.values()]
    thread.pending.clear()
    for (const request of pending) request.reject(error)
  }
  worker.on('error', fail)
  worker.on('exit', (code) => fail(new Error(`fs writer thread exited with code ${code}`)))
  threads.push(thread)
  return thread
}

function settle(thread: Thread, reply: Reply): void {
  const request = thread.pending.get(reply.id)
  if (request === undefined) return
  thread.pending.delete(reply.id)
  if (thread.pending.size === 0) thread.worker.unref()
  if (reply.synced) fsyncs++
  if (reply.error !== undefined) request.reject(errnoError(reply.error))
  else request.resolve(reply)
}

function errnoError(fields: ErrorFields): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(fields.message)
  if (fields.code !== undefined) error.code = fields.code
  if (fields.syscall !== undefined) error.syscall = fields.syscall
  return error
}

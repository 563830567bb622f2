/**
 * Worker threads that write the fs store's temp files (fs-writer-thread-source.ts).
 *
 * Writing a temp file through `fs/promises` is four thread-pool round trips (open, write, fsync,
 * close), and a create-only put a fifth (link); each costs the event loop a wake-up and a
 * promise, ≈ 0.1 ms on a small VM. A writer thread makes the same calls synchronously, off the
 * event loop, and answers once: one message each way per put (what it saves a turn is in
 * docs/performance.md); a create-only put's thread also fsyncs the new name's folder and
 * answers that apart (no thread-pool job for it).
 *
 * The threads are a WriterThreadPool (fs-writer-pool.ts: which thread a write goes to, threads
 * that die); up to MAX_WRITER_THREADS per process, idle ones do not keep the process alive.
 */
import { Worker } from 'node:worker_threads'
import { errnoError, WriterThreadPool } from './fs-writer-pool.ts'
import { WRITER_THREAD_SOURCE } from './fs-writer-thread-source.ts'

export { MAX_WRITER_THREADS } from './fs-writer-pool.ts'

export interface TempWrite {
  /** Folder of the temp file (on the same filesystem as its final name). */
  tmpDir: string
  /** The bytes; moved to the thread when they fill their buffer (then unusable here). */
  bytes: Uint8Array<ArrayBuffer>
  /** fsync the bytes before answering. */
  durable: boolean
  /** Give the written file this name too (`link()`, fails if the name exists). */
  linkTo?: string | undefined
  /**
   * With `linkTo`: the descriptor of the folder the name is made in (held open by the caller
   * until `folderSync` settles), fsynced on the thread once the link is made and answered.
   */
  syncFolder?: number | undefined
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
  /**
   * With `syncFolder`: the folder's fsync on the thread after the link, settled when it is done
   * (with `error` when it failed; `skipped` when no link was made). Rejects only when the thread
   * dies first (the outcome is then unknown).
   */
  folderSync?: Promise<{ error?: NodeJS.ErrnoException; skipped?: true }>
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

const pool = new WriterThreadPool(
  () => new Worker(WRITER_THREAD_SOURCE, { eval: true, name: 'turnline fs writer' }),
)

/** Writes a temp file on a writer thread; rejects with the errno error of the failed step. */
export async function writeOnThread(request: TempWrite): Promise<TempWritten> {
  const { bytes, tmpDir, durable, linkTo, syncFolder } = request
  const sent = pool.sendWithFollowUp(
    { tmpDir, bytes, durable, linkTo, syncFolder },
    bytes,
    linkTo !== undefined && syncFolder !== undefined,
  )
  const folderSync = sent.followUp?.then((second) => {
    if (second.folderSyncError !== undefined) return { error: errnoError(second.folderSyncError) }
    return second.folderSynced === true ? {} : { skipped: true as const }
  })
  folderSync?.catch(() => undefined)
  const reply = await sent.reply
  if (reply.temp === undefined) throw errnoError({ message: 'fs writer thread sent no file' })
  return {
    temp: reply.temp,
    ...(reply.version === undefined ? {} : { version: reply.version }),
    ...(reply.linkError === undefined ? {} : { linkError: errnoError(reply.linkError) }),
    ...(reply.removed === true ? { removed: true } : {}),
    ...(folderSync === undefined ? {} : { folderSync }),
  }
}

/** Appends on a writer thread; rejects with the errno error of the failed step. */
export async function appendOnThread(request: AppendRequest): Promise<AppendReply> {
  const reply = await pool.send({ op: 'append', ...request }, request.bytes)
  const size = reply.size ?? 0
  if (reply.conflict) return { conflict: true, size, version: reply.version }
  if (reply.version === undefined) throw errnoError({ message: 'fs writer thread sent no size' })
  return { conflict: false, size, version: reply.version, created: reply.created === true }
}

/**
 * The last step of a plain or compare-and-swap put, on a writer thread (`op: 'replace'` of
 * fs-writer-thread-source.ts): `temp` renamed over `to`, after the file there was found to have
 * the etag `ifMatch` when given. One message each way instead of a thread-pool round trip per
 * call (open, two stats, read, close, rename).
 */
export type ReplaceReply =
  | { renamed: true }
  | { mismatch: true }
  | { unread: NodeJS.ErrnoException }
  | { renameError: NodeJS.ErrnoException }

export async function replaceOnThread(
  temp: string,
  to: string,
  ifMatch: string | undefined,
): Promise<ReplaceReply> {
  const reply = await pool.send({ op: 'replace', temp, to, ifMatch }, new Uint8Array(0))
  if (reply.renamed === true) return { renamed: true }
  if (reply.mismatch === true) return { mismatch: true }
  if (reply.unread !== undefined) return { unread: errnoError(reply.unread) }
  return { renameError: errnoError(reply.renameError ?? { message: 'fs writer thread: no reply' }) }
}

/** Starts a writer thread ahead of the first write (startup takes tens of ms). */
export function warmWriterThreads(): void {
  pool.warm()
}

/** fsyncs made on writer threads in this process (benchmarks count them with their own). */
export function writerThreadFsyncs(): number {
  return pool.fsyncs
}

/** Requests sent to writer threads in this process (for tests). */
export function writerThreadRequests(): number {
  return pool.sent
}

/** Writer threads running (for tests). */
export function writerThreadCount(): number {
  return pool.count()
}

/** Writes sent to a thread and not answered yet (for tests). */
export function pendingThreadWrites(): number {
  return pool.pendingCount()
}

/** Stops every writer thread; their pending writes fail (for tests of a thread that dies). */
export async function stopWriterThreads(): Promise<void> {
  await pool.stop()
}

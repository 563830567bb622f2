/**
 * The pool of fs writer threads (fs-writer-threads.ts is its API; fs-writer-thread-source.ts the
 * threads' code).
 *
 * A request goes to an idle running thread, else to the least busy running one; when every
 * running thread is busy and none is booting, a new thread is started in the background (up to
 * MAX_WRITER_THREADS) for later requests. No request waits for a thread to boot while another
 * is running (a boot is 60–170 ms at load; a busy thread answers in a few ms): only when none
 * is running yet does a request queue on the booting one. Requests to one thread are answered in
 * the order they were sent; the store does not rely on an order across threads (each caller
 * awaits its own write, and a compare-and-swap holds its lock).
 *
 * Threads do not keep the process alive while idle. A thread that dies fails its pending
 * requests with an error (whether their files were written is then unknown, as after any I/O
 * error) and is replaced on the next request.
 */
import type { Worker } from 'node:worker_threads'

/** Most writer threads per process (the thread pool's default size). */
export const MAX_WRITER_THREADS = 4

export interface Reply {
  id: number
  ready?: boolean
  temp?: string
  version?: string
  size?: number
  created?: boolean
  conflict?: boolean
  synced?: boolean
  error?: ErrorFields
  linkError?: ErrorFields
  removed?: boolean
  folderSynced?: boolean
  folderSyncError?: ErrorFields
  folderSkipped?: boolean
  renamed?: boolean
  mismatch?: boolean
  unread?: ErrorFields
  renameError?: ErrorFields
}
export interface ErrorFields {
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
  /** It sent `ready`: it answers requests as they come. */
  running: boolean
  pending: Map<number, Pending>
}

/** Makes one writer thread running the given code (an `eval` Worker). */
export type StartWorker = () => Worker

export class WriterThreadPool {
  private readonly threads: Thread[] = []
  private nextId = 0
  /** fsyncs made on this pool's threads. */
  fsyncs = 0
  /** Requests sent to this pool's threads. */
  sent = 0

  constructor(private readonly startWorker: StartWorker) {}

  /** Sends one request; the bytes are moved when they fill their buffer. */
  send(message: Record<string, unknown>, bytes: Uint8Array<ArrayBuffer>): Promise<Reply> {
    return this.sendWithFollowUp(message, bytes, false).reply
  }

  /**
   * Sends one request that the thread answers twice (`followUp`: the second reply, to the
   * `syncId` the request carries), or once.
   */
  sendWithFollowUp(
    message: Record<string, unknown>,
    bytes: Uint8Array<ArrayBuffer>,
    followUp = true,
  ): { reply: Promise<Reply>; followUp: Promise<Reply> | undefined } {
    const thread = this.pick()
    const id = this.nextId++
    const syncId = followUp ? this.nextId++ : undefined
    this.sent++
    if (thread.pending.size === 0) thread.worker.ref()
    const awaiting = (key: number) =>
      new Promise<Reply>((resolve, reject) => thread.pending.set(key, { resolve, reject }))
    const reply = awaiting(id)
    const second = syncId === undefined ? undefined : awaiting(syncId)
    // Moved, not copied, when the bytes are their buffer's whole content.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    try {
      const request = syncId === undefined ? { id, ...message } : { id, syncId, ...message }
      thread.worker.postMessage(request, whole ? [bytes.buffer] : [])
    } catch (error) {
      this.settle(thread, { id, error: { message: String(error) } })
      if (syncId !== undefined) this.settle(thread, { id: syncId, folderSkipped: true })
    }
    return { reply, followUp: second }
  }

  /** Starts a thread ahead of the first request when there is none. */
  warm(): void {
    if (this.threads.length === 0) this.start()
  }

  /** Threads started and not dead (running or booting). */
  count(): number {
    return this.threads.length
  }

  /** Threads that sent `ready`. */
  runningCount(): number {
    return this.threads.filter((thread) => thread.running).length
  }

  /** Requests sent and not answered yet. */
  pendingCount(): number {
    return this.threads.reduce((sum, thread) => sum + thread.pending.size, 0)
  }

  /** Stops every thread; their pending requests fail. */
  async stop(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()))
  }

  private pick(): Thread {
    const running = leastBusy(this.threads.filter((thread) => thread.running))
    if (running === undefined) return leastBusy(this.threads) ?? this.start()
    const booting = this.threads.some((thread) => !thread.running)
    if (running.pending.size > 0 && !booting && this.threads.length < MAX_WRITER_THREADS) {
      this.start() // for later requests: this one goes to the running thread
    }
    return running
  }

  private start(): Thread {
    const worker = this.startWorker()
    const thread: Thread = { worker, running: false, pending: new Map() }
    worker.on('message', (reply: Reply) => {
      if (reply.ready === true) thread.running = true
      else this.settle(thread, reply)
    })
    // After the listener: adding a 'message' listener refs the worker's port, which would keep
    // the process alive for a thread that never gets a request (one warmed, or started for
    // later requests).
    worker.unref()
    const fail = (error: Error) => {
      const index = this.threads.indexOf(thread)
      if (index >= 0) this.threads.splice(index, 1)
      const pending = [...thread.pending.values()]
      thread.pending.clear()
      for (const request of pending) request.reject(error)
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`fs writer thread exited with code ${code}`)))
    this.threads.push(thread)
    return thread
  }

  private settle(thread: Thread, reply: Reply): void {
    const request = thread.pending.get(reply.id)
    if (request === undefined) return
    thread.pending.delete(reply.id)
    if (thread.pending.size === 0) thread.worker.unref()
    if (reply.synced) this.fsyncs++
    if (reply.folderSynced) this.fsyncs++
    if (reply.error !== undefined) request.reject(errnoError(reply.error))
    else request.resolve(reply)
  }
}

function leastBusy(threads: Thread[]): Thread | undefined {
  let best: Thread | undefined
  for (const thread of threads) {
    if (best === undefined || thread.pending.size < best.pending.size) best = thread
  }
  return best
}

export function errnoError(fields: ErrorFields): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(fields.message)
  if (fields.code !== undefined) error.code = fields.code
  if (fields.syscall !== undefined) error.syscall = fields.syscall
  return error
}

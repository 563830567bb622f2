import type { BodyReader } from '../../src/shared/body-reader.ts'

/** Chunks held for a reader that is behind before the connection is paused. */
const QUEUED = 16

type ReadResult = ReadableStreamReadResult<Uint8Array>

/** What the body asks of the connection it is read from. */
export interface BodySource {
  pause(): void
  resume(): void
  /** Stops the answer: the connection is closed. */
  close(): void
}

/**
 * The body of an answer, fed by its connection (`push`, then `finish`): its chunks as they come
 * (the connection paused while the reader is 16 chunks behind), decompressed by the connection
 * when the answer says it is compressed. A connection that closes before the end errors the body
 * with `TypeError('terminated')`, as undici's does (`finish(error)`); `fail` errors it with an
 * abort's reason (chunks not yet read are dropped, as an errored web stream drops them);
 * cancelling it closes the connection. `finished` is called once, however it ends.
 *
 * It is read through `read()` (a `BodyReader`, what the model adapter and the tool output
 * capture take when the Response offers one: no web stream, no promise per chunk beyond the
 * read) or, for everyone else, through `stream()`, a web `ReadableStream` over the same reads.
 */
export class NodeResponseBody implements BodyReader {
  private readonly queue: Uint8Array[] = []
  private over = false
  private paused = false
  private failure: { reason: unknown } | undefined
  private waiter: { resolve: (r: ReadResult) => void; reject: (e: unknown) => void } | undefined

  constructor(
    private readonly source: BodySource,
    private readonly finished: () => void,
  ) {}

  /** A chunk of the answer (from the connection). */
  push(chunk: Buffer): void {
    if (this.over) return
    const value = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const waiter = this.waiter
    if (waiter !== undefined) {
      this.waiter = undefined
      waiter.resolve({ done: false, value })
      return
    }
    this.queue.push(value)
    if (this.queue.length >= QUEUED && !this.paused) {
      this.paused = true
      this.source.pause()
    }
  }

  /** The answer ended (from the connection); with `error`, it broke off. */
  finish(error?: unknown): void {
    this.end(error === undefined ? undefined : new TypeError('terminated', { cause: error }))
  }

  /** The next chunk; done once the answer has ended or the body was cancelled. */
  read(): Promise<ReadResult> {
    if (this.failure !== undefined) return Promise.reject(this.failure.reason)
    const value = this.queue.shift()
    if (value !== undefined) {
      if (this.paused && this.queue.length < QUEUED) this.unpause()
      return Promise.resolve({ done: false, value })
    }
    if (this.over) return Promise.resolve({ done: true, value: undefined })
    if (this.paused) this.unpause()
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject }
    })
  }

  /** Stops reading: the connection is closed, later reads are done. */
  cancel(): Promise<void> {
    if (!this.over) {
      this.over = true
      this.finished()
      this.source.close()
    }
    this.queue.length = 0
    this.settle({ done: true, value: undefined })
    return Promise.resolve()
  }

  /** Errors the body with `reason` (an abort) and closes the connection. */
  fail(reason: unknown): void {
    this.end(reason)
    this.source.close()
  }

  /** The body as a web stream (its reads are this body's reads). */
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          const next = await this.read()
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        },
        cancel: () => this.cancel(),
      },
      { highWaterMark: 0 },
    )
  }

  private unpause(): void {
    this.paused = false
    this.source.resume()
  }

  private end(error?: unknown): void {
    if (this.over) return
    this.over = true
    this.finished()
    if (error === undefined) {
      this.settle({ done: true, value: undefined })
      return
    }
    this.failure = { reason: error }
    this.queue.length = 0
    const waiter = this.waiter
    this.waiter = undefined
    waiter?.reject(error)
  }

  private settle(result: ReadResult): void {
    const waiter = this.waiter
    this.waiter = undefined
    waiter?.resolve(result)
  }
}

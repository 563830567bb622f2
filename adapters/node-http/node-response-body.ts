import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import type { BodyReader } from '../../src/shared/body-reader.ts'

/** Socket chunks held for a reader that is behind before the socket is paused. */
const QUEUED = 16

type ReadResult = ReadableStreamReadResult<Uint8Array>

/**
 * The body of an answer, read off its socket: the socket's chunks as they come (paused while
 * the reader is 16 chunks behind), decompressed when the answer says it is compressed (gzip,
 * deflate, br, as fetch does). A connection that closes before the end errors the body with
 * `TypeError('terminated')`, as undici's does; `fail` errors it with an abort's reason (chunks
 * not yet read are dropped, as an errored web stream drops them); cancelling it closes the
 * connection. `finished` is called once, however it ends.
 *
 * It is read through `read()` (a `BodyReader`, what the model adapter and the tool output
 * capture take when the Response offers one: no web stream, no promise per chunk beyond the
 * read) or, for everyone else, through `stream()`, a web `ReadableStream` over the same reads.
 */
export class NodeResponseBody implements BodyReader {
  private readonly queue: Uint8Array[] = []
  private over = false
  private failure: { reason: unknown } | undefined
  private waiter: { resolve: (r: ReadResult) => void; reject: (e: unknown) => void } | undefined
  private readonly source: Readable

  constructor(
    private readonly res: IncomingMessage,
    private readonly finished: () => void,
  ) {
    const source = decoded(res)
    this.source = source
    source.on('data', (chunk: Buffer) => {
      if (this.over) return
      const value = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      const waiter = this.waiter
      if (waiter !== undefined) {
        this.waiter = undefined
        waiter.resolve({ done: false, value })
        return
      }
      this.queue.push(value)
      if (this.queue.length >= QUEUED) source.pause()
    })
    source.once('end', () => this.end())
    source.once('error', (error) => this.end(new TypeError('terminated', { cause: error })))
    res.once('close', () => {
      if (!res.complete)
        this.end(new TypeError('terminated', { cause: new Error('other side closed') }))
    })
  }

  /** The next chunk; done once the answer has ended or the body was cancelled. */
  read(): Promise<ReadResult> {
    if (this.failure !== undefined) return Promise.reject(this.failure.reason)
    const value = this.queue.shift()
    if (value !== undefined) {
      if (this.queue.length < QUEUED && !this.over) this.source.resume()
      return Promise.resolve({ done: false, value })
    }
    if (this.over) return Promise.resolve({ done: true, value: undefined })
    this.source.resume()
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject }
    })
  }

  /** Stops reading: the connection is closed, later reads are done. */
  cancel(): Promise<void> {
    if (!this.over) {
      this.over = true
      this.finished()
      this.res.destroy()
    }
    this.queue.length = 0
    this.settle({ done: true, value: undefined })
    return Promise.resolve()
  }

  /** Errors the body with `reason` (an abort) and closes the connection. */
  fail(reason: unknown): void {
    this.end(reason)
    this.res.destroy()
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

/** The answer's bytes, through a decompressor when it names a content coding fetch decodes. */
function decoded(res: IncomingMessage): Readable {
  const coding = res.headers['content-encoding']?.trim().toLowerCase()
  const decoder =
    coding === 'gzip' || coding === 'x-gzip'
      ? createGunzip()
      : coding === 'deflate'
        ? createInflate()
        : coding === 'br'
          ? createBrotliDecompress()
          : undefined
  if (decoder === undefined) return res
  res.on('error', (error) => decoder.destroy(error))
  return res.pipe(decoder)
}

import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'

/** Socket chunks held for a reader that is behind before the socket is paused. */
const QUEUED = new CountQueuingStrategy({ highWaterMark: 16 })

/**
 * The body of an answer as the stream a fetch `Response` reads: the socket's chunks as they
 * come (paused while the reader is behind), decompressed when the answer says it is compressed
 * (gzip, deflate, br, as fetch does). A connection that closes before the end errors the stream
 * with `TypeError('terminated')`, as undici's does; `fail` errors it with an abort's reason;
 * cancelling it closes the connection. `finished` is called once, however it ends.
 */
export function responseBody(
  res: IncomingMessage,
  finished: () => void,
): { stream: ReadableStream<Uint8Array>; fail: (reason: unknown) => void } {
  const source = decoded(res)
  let over = false
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const end = (error?: unknown) => {
    if (over) return
    over = true
    finished()
    if (error === undefined) controller.close()
    else controller.error(error)
  }
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c
        source.on('data', (chunk: Buffer) => {
          if (over) return
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
          if ((controller.desiredSize ?? 1) <= 0) source.pause()
        })
        source.once('end', () => end())
        source.once('error', (error) => end(new TypeError('terminated', { cause: error })))
        res.once('close', () => {
          if (!res.complete)
            end(new TypeError('terminated', { cause: new Error('other side closed') }))
        })
      },
      pull() {
        source.resume()
      },
      cancel() {
        over = true
        finished()
        res.destroy()
      },
    },
    QUEUED,
  )
  return {
    stream,
    fail: (reason) => {
      end(reason)
      res.destroy()
    },
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

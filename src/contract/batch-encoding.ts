import { concatBytes } from '../shared/concat-bytes.ts'
import { type Batch, parseBatch } from './batch.ts'
import { corruptData } from './corrupt-data.ts'

/**
 * How a batch's JSON is stored. Batches of versions 1–4 are their JSON text as it is; versions
 * 5 and 6 the text gzip-compressed (RFC 1952, through the Web-standard `CompressionStream`: the
 * same on Node, Deno and Workers); from version 7 either, as the writer chose: text when the
 * store keeps it in no more room than gzip would (a filesystem's block,
 * `ObjectStore.allocationBytes`), gzip otherwise. A reader tells the two apart by the first byte
 * — JSON text starts with `{`, gzip with 0x1f 0x8b — so every version reads through one path. No
 * `Content-Encoding` is set on the object: a fetch-based S3 client would then decompress it on
 * the way and hand back bytes that are not what was stored.
 */

export const GZIP_BATCH_CONTENT_TYPE = 'application/gzip'
/** The first batch version stored compressed. */
const COMPRESSED_FROM_VERSION = 5
/** The first batch version stored compressed or not, as the writer chose. */
const EITHER_FROM_VERSION = 7

/** A batch's JSON text decompresses to at most this (a batch holds ≤ 16 MiB of events). */
const MAX_BATCH_TEXT_BYTES = 64 * 1024 * 1024

const encoder = new TextEncoder()

export function isGzip(body: Uint8Array): boolean {
  return body.byteLength >= 2 && body[0] === 0x1f && body[1] === 0x8b
}

/**
 * Compresses bytes to gzip (RFC 1952). The default is the Web-standard `CompressionStream`; a
 * platform may give a cheaper one (Node's entries give node:zlib's: about a fifth of the CPU for a
 * batch's few KB, `SessionStoreOptions.gzip`). Any gzip reads back the same.
 */
export type Gzip = (bytes: Uint8Array) => Promise<Uint8Array>

export const webGzip: Gzip = (bytes) =>
  collect(new CompressionStream('gzip'), bytes, Number.POSITIVE_INFINITY)

/** The stored bytes of a batch whose JSON is `text`: gzip-compressed. */
export function compressBatchText(text: string, gzip: Gzip = webGzip): Promise<Uint8Array> {
  return gzip(encoder.encode(text))
}

/**
 * Writes `input` through `stream` and reads what comes out (a writer and a reader on the
 * stream itself: a Blob and a Response around it cost twice the CPU for a batch's few KB). Throws
 * RangeError past `limit` bytes.
 */
async function collect(
  stream: CompressionStream | DecompressionStream,
  input: Uint8Array,
  limit: number,
): Promise<Uint8Array> {
  const writer = stream.writable.getWriter()
  const written = writer.write(input as Uint8Array<ArrayBuffer>).then(() => writer.close())
  written.catch(() => {}) // the reader sees the same failure
  const reader = stream.readable.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength
    if (size > limit) {
      await reader.cancel()
      throw new RangeError('too large')
    }
    chunks.push(read.value)
  }
  await written
  return concatBytes(chunks, size)
}

/**
 * The JSON bytes of a stored batch: decompressed when it is gzip, as they are otherwise. A gzip
 * body that does not decompress (torn, damaged, or past the bound) is corrupt_data.
 */
export async function batchText(body: Uint8Array): Promise<Uint8Array> {
  if (!isGzip(body)) return body
  try {
    return await collect(new DecompressionStream('gzip'), body, MAX_BATCH_TEXT_BYTES)
  } catch (error) {
    throw corruptData(
      'batch',
      error instanceof RangeError
        ? `decompresses to more than ${MAX_BATCH_TEXT_BYTES} bytes`
        : 'not valid gzip',
      { reason: 'invalid_gzip' },
    )
  }
}

/**
 * Reads a stored batch, whatever its version: versions 5 and 6 must be stored compressed,
 * versions 1–4 as their text, 7 on either way. Throws TurnlineError('corrupt_data' |
 * 'unsupported_version').
 */
export async function parseStoredBatch(body: Uint8Array): Promise<Batch> {
  const compressed = isGzip(body)
  const batch = parseBatch(await batchText(body))
  if (
    batch.version < EITHER_FROM_VERSION &&
    compressed !== batch.version >= COMPRESSED_FROM_VERSION
  ) {
    throw corruptData(
      'batch',
      `version ${batch.version} is stored ${compressed ? 'compressed' : 'as text'}`,
      { reason: 'invalid_encoding' },
    )
  }
  return batch
}

/** How a writer stores its batches: its gzip, and up to what size it keeps one as text. */
export interface BatchEncoding {
  gzip?: Gzip | undefined
  /** From version 7, a batch whose text is up to this many bytes is stored as text (default 0). */
  textUpTo?: number | undefined
}

/**
 * The stored bytes of `batch`, whose JSON is `text`: compressed in versions 5 and 6; from
 * version 7 compressed when its text is over `textUpTo` bytes. A batch's text fits in a
 * filesystem block most turns (≈ 2 KB), where gzip saves nothing of the disk and costs
 * node:zlib's set-up (≈ 0.1–0.2 ms of the server's CPU each, cold).
 */
export async function storedBatchBody(
  batch: Pick<Batch, 'version'>,
  text: string,
  { gzip = webGzip, textUpTo = 0 }: BatchEncoding = {},
): Promise<{ body: Uint8Array; contentType: string }> {
  const bytes = encoder.encode(text)
  const asText =
    batch.version < COMPRESSED_FROM_VERSION ||
    (batch.version >= EITHER_FROM_VERSION && bytes.byteLength <= textUpTo)
  return asText
    ? { body: bytes, contentType: 'application/json' }
    : { body: await gzip(bytes), contentType: GZIP_BATCH_CONTENT_TYPE }
}

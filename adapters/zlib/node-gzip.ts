import { gzip as gzipAsync, gzipSync } from 'node:zlib'
import type { Gzip } from '../../src/contract/batch-encoding.ts'

/** Up to this, compressed on the calling thread: a batch of a few KB takes tens of microseconds. */
const SYNC_BYTES = 256 * 1024

/**
 * node:zlib's gzip for batches (`SessionStoreOptions.gzip`): the Web-standard CompressionStream
 * costs about five times the CPU for a batch's few KB, in its stream machinery and the hop to
 * zlib's thread pool. Larger inputs go to the thread pool, so the event loop never waits long.
 */
export const nodeGzip: Gzip = (bytes) =>
  bytes.byteLength <= SYNC_BYTES
    ? Promise.resolve(new Uint8Array(gzipSync(bytes)))
    : new Promise((resolve, reject) =>
        gzipAsync(bytes, (error, out) => (error ? reject(error) : resolve(new Uint8Array(out)))),
      )

/**
 * SigV4's hashes on node:crypto, for the Node and Lambda entries: computed on the calling thread
 * (a SHA-256 of a 3 KB body ≈ 6 µs), where Web Crypto's asynchronous digest and sign each hop to
 * the thread pool and back (≈ 40–70 µs of CPU each; a signed PUT makes three). Same digests.
 * Imported only by those entries: a Worker bundle must not pull in node:crypto.
 */
import { createHash, createHmac } from 'node:crypto'
import type { SigV4Hashes } from './sigv4.ts'

export const nodeSigV4Hashes: SigV4Hashes = {
  sha256Hex: (data) => createHash('sha256').update(data).digest('hex'),
  hmacSha256: (key, data) => createHmac('sha256', key).update(data).digest(),
}

import { createHash } from 'node:crypto'
import { OUTPUT_CHUNK_BYTES } from '../../src/contract/output-artifact.ts'

const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')

/**
 * The id a session's writer gives an output of these bytes (output-artifacts.ts): a hash of its
 * chunks' hashes and sizes, unkeyed, so anyone who has (or guesses) the bytes can compute it.
 */
export function contentArtifactId(text: string): string {
  const bytes = Buffer.from(text)
  const listing: string[] = []
  for (let at = 0; at < bytes.byteLength; at += OUTPUT_CHUNK_BYTES) {
    const chunk = bytes.subarray(at, at + OUTPUT_CHUNK_BYTES)
    listing.push(`${sha(chunk)}:${chunk.byteLength}`)
  }
  return `out_${sha(listing.join('\n')).slice(0, 32)}`
}

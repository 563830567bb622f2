import type { OutputArtifact } from '../../contract/output-artifact.ts'
import { bodyReader } from '../../shared/body-reader.ts'
import { joinBytes } from './join-bytes.ts'
import { KeptOutput, type OutputKeeping } from './kept-output.ts'
import { outputPreview, previewSizes, textOfSlice } from './output-preview.ts'
import { readLimited } from './read-limited.ts'

export type CapturedOutput =
  | { kind: 'inline'; text: string }
  | { kind: 'artifact'; text: string; artifact: OutputArtifact }
  | { kind: 'too_large'; text: string }

/** The last `size` bytes of `tail` followed by `more`. */
function keepTail(tail: Uint8Array, more: Uint8Array, size: number): Uint8Array {
  if (more.byteLength >= size) return more.slice(more.byteLength - size)
  const keep = Math.min(tail.byteLength, size - more.byteLength)
  return joinBytes([tail.subarray(tail.byteLength - keep), more])
}

/**
 * Reads a tool's answer: up to `limit` bytes it is the text itself; beyond, with `keeping`, the
 * whole answer streams into an output artifact (at most one chunk and the preview's head and
 * tail held in memory) and the text is a preview naming it; its size, when known (`knownSize`, or
 * the answer's Content-Length), is counted against the caps before any of it is stored. Without
 * `keeping` the answer is cut
 * at `limit` with a notice, as before artifacts existed.
 */
export async function captureOutput(
  response: Response,
  limit: number,
  keeping?: OutputKeeping,
  knownSize?: number,
): Promise<CapturedOutput> {
  if (!keeping) {
    const { text, cut } = await readLimited(response, limit)
    return { kind: 'inline', text: cut ? `${text}\n[response cut at ${limit} bytes]` : text }
  }
  const reader = bodyReader(response)
  if (!reader) return { kind: 'inline', text: '' }
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { kind: 'inline', text: new TextDecoder().decode(joinBytes(parts)) }
    parts.push(value)
    size += value.byteLength
    if (size > limit) break
  }
  const first = joinBytes(parts)
  parts.length = 0
  const sizes = previewSizes(limit)
  const head = first.slice(0, sizes.head)
  let tail = keepTail(new Uint8Array(0), first, sizes.tail)
  const kept = await KeptOutput.start(keeping)
  const tooLarge = async (reason: string): Promise<CapturedOutput> => {
    await reader.cancel().catch(() => undefined)
    const text = `${textOfSlice(head, { after: true })}\n[the answer exceeded ${reason}; it was not kept]`
    return { kind: 'too_large', text }
  }
  const early = await kept.expect(Math.max(size, knownSize ?? declaredLength(response)))
  if (early !== undefined) return tooLarge(early)
  try {
    const refused = await kept.write(first)
    if (refused !== undefined) return await tooLarge(refused)
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const refused = await kept.write(value)
      if (refused !== undefined) return await tooLarge(refused)
      tail = keepTail(tail, value, sizes.tail)
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined)
    throw error
  }
  const artifact = await kept.finish()
  return { kind: 'artifact', text: outputPreview(artifact, head, tail), artifact }
}

/** The answer's Content-Length (0 when it has none or it is not a number). */
function declaredLength(response: Response): number {
  const length = Number(response.headers.get('content-length') ?? '')
  return Number.isSafeInteger(length) && length > 0 ? length : 0
}

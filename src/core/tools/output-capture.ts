import type { OutputArtifact } from '../../contract/output-artifact.ts'
import type { OutputArtifacts } from '../../store/output-artifacts.ts'
import { joinBytes } from './join-bytes.ts'
import { outputPreview, previewSizes, textOfSlice } from './output-preview.ts'
import { readLimited } from './read-limited.ts'

/** Where outputs over the inline limit go, and how large one may be. */
export interface OutputKeeping {
  artifacts: OutputArtifacts
  /** Bytes one output may have in all; a larger one is refused (nothing of it is kept). */
  maxBytes: number
  /** Bytes the session's artifacts may hold in all; an answer that would pass it is refused. */
  maxSessionBytes?: number
}

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

/** Bytes one output may have now (the cap on one output, or what the session has left), and why. */
export async function outputCap(
  keeping: OutputKeeping,
): Promise<{ bytes: number; reason: string }> {
  const own = {
    bytes: keeping.maxBytes,
    reason: `${keeping.maxBytes} bytes, the most one tool output may have (TURNLINE_TOOL_MAX_OUTPUT_BYTES)`,
  }
  if (keeping.maxSessionBytes === undefined) return own
  const left = keeping.maxSessionBytes - (await keeping.artifacts.storedBytes())
  if (left >= own.bytes) return own
  return {
    bytes: Math.max(0, left),
    reason:
      `the ${keeping.maxSessionBytes} bytes of tool outputs one session may keep ` +
      '(TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES)',
  }
}

/**
 * Reads a tool's answer: up to `limit` bytes it is the text itself; beyond, with `keeping`, the
 * whole answer streams into an output artifact (at most one chunk and the preview's head and
 * tail held in memory) and the text is a preview naming it. Without `keeping` the answer is cut
 * at `limit` with a notice, as before artifacts existed.
 */
export async function captureOutput(
  response: Response,
  limit: number,
  keeping?: OutputKeeping,
): Promise<CapturedOutput> {
  if (!keeping || !response.body) {
    const { text, cut } = await readLimited(response, limit)
    return { kind: 'inline', text: cut ? `${text}\n[response cut at ${limit} bytes]` : text }
  }
  const reader = response.body.getReader()
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
  const cap = await outputCap(keeping)
  const tooLarge = async (): Promise<CapturedOutput> => {
    await reader.cancel()
    const text = `${textOfSlice(head, { after: true })}\n[the answer exceeded ${cap.reason}; it was not kept]`
    return { kind: 'too_large', text }
  }
  if (size > cap.bytes) return tooLarge()
  const writer = keeping.artifacts.writer()
  try {
    await writer.write(first)
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (writer.written + value.byteLength > cap.bytes) return await tooLarge()
      await writer.write(value)
      tail = keepTail(tail, value, sizes.tail)
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined)
    throw error
  }
  const artifact = await writer.finish()
  return { kind: 'artifact', text: outputPreview(artifact, head, tail), artifact }
}

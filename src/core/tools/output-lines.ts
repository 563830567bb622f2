import type { OutputArtifact } from '../../contract/output-artifact.ts'
import type { OutputArtifacts } from '../../store/output-artifacts.ts'
import { joinBytes } from './join-bytes.ts'
import { textOfSlice } from './output-preview.ts'

/** Bytes of one line kept for reading and searching; the rest of a longer line is skipped. */
export const MAX_LINE_BYTES = 64 * 1024

export interface OutputLine {
  /** 1-based. */
  number: number
  /** Byte offset of the line's first byte. */
  offset: number
  /** The line without its newline, at most MAX_LINE_BYTES of it. */
  text: string
  /** Whether the line was longer than MAX_LINE_BYTES. */
  cut: boolean
}

/**
 * The artifact's lines from line `from` on, read chunk by chunk: memory stays within one chunk
 * and one line's MAX_LINE_BYTES, whatever the artifact's size.
 */
export async function* outputLines(
  outputs: OutputArtifacts,
  artifact: OutputArtifact,
  from = 1,
): AsyncGenerator<OutputLine> {
  let number = 1
  let lineStart = 0
  let position = 0
  let parts: Uint8Array[] = []
  let kept = 0
  let cut = false
  const keep = (bytes: Uint8Array) => {
    const room = MAX_LINE_BYTES - kept
    if (bytes.byteLength > room) cut = true
    const part = bytes.subarray(0, Math.max(0, room))
    if (part.byteLength > 0) parts.push(part.slice())
    kept += part.byteLength
  }
  const line = (): OutputLine => {
    const text = textOfSlice(joinBytes(parts), { after: cut })
    return { number, offset: lineStart, text, cut }
  }
  for await (const chunk of outputs.read(artifact)) {
    let start = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      if (number >= from) {
        keep(chunk.subarray(start, end))
        yield line()
      }
      parts = []
      kept = 0
      cut = false
      number++
      start = end + 1
      lineStart = position + start
    }
    if (number >= from) keep(chunk.subarray(start))
    position += chunk.byteLength
  }
  if (lineStart < artifact.size && number >= from) yield line()
}

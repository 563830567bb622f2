import type { OutputArtifact } from '../../contract/output-artifact.ts'
import { groupDigits } from '../../shared/digit-groups.ts'

const decoder = new TextDecoder()

/** Head and tail bytes of a preview for an inline limit of `limit` bytes. */
export function previewSizes(limit: number): { head: number; tail: number } {
  return { head: Math.min(16 * 1024, Math.floor(limit / 2)), tail: Math.min(4 * 1024, limit >> 2) }
}

/** UTF-8 text of bytes cut from a longer output: partial characters at either edge dropped. */
export function textOfSlice(bytes: Uint8Array, cut: { before?: boolean; after?: boolean }): string {
  const cutBefore = cut.before === true
  const cutAfter = cut.after === true
  let start = 0
  if (cutBefore) while (start < bytes.byteLength && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++
  let end = bytes.byteLength
  if (cutAfter) {
    let lead = end - 1
    while (lead > start && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--
    const byte = bytes[lead] ?? 0
    const width = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    if (lead + width > end) end = lead
  }
  return decoder.decode(bytes.subarray(start, end))
}

const n = groupDigits

/**
 * What the model and the transcript see of an output (or a turn's input text) kept as an
 * artifact: its head, a notice naming the artifact, its sizes and how to read the rest, and its
 * tail.
 */
export function outputPreview(
  artifact: OutputArtifact,
  head: Uint8Array,
  tail: Uint8Array,
  what: 'output' | 'input' = 'output',
): string {
  const hidden = artifact.size - head.byteLength - tail.byteLength
  const notice =
    `[${what} of ${n(artifact.size)} bytes (${n(artifact.lines)} lines) kept whole as artifact ` +
    `${artifact.id}; ${n(hidden)} bytes between byte ${n(head.byteLength)} and the last ` +
    `${n(tail.byteLength)} bytes are not shown. Read any part with read_tool_output ` +
    `{"artifact_id":"${artifact.id}"} and offset/length (bytes), start_line/line_count, ` +
    'search or regex.]'
  return `${textOfSlice(head, { after: true })}\n${notice}\n${textOfSlice(tail, { before: true })}`
}

const NOTICE =
  /\n(\[output of [\d,]+ bytes \([\d,]+ lines?\) kept whole as artifact out_[0-9a-f]{32};[^\n]*\])\n/

/**
 * The notice of a preview made by `outputPreview` in `text` (undefined when there is none), so
 * that a view cut shorter than the preview — the tool_output item of the events — still names
 * the artifact.
 */
export function artifactNoticeIn(text: string): string | undefined {
  return NOTICE.exec(text)?.[1]
}

/**
 * Whether a message of the transcript holds the preview of a text kept as an artifact: a turn
 * input's or a follow-up's (a user message), or a tool output's (a tool message: a client's
 * function output kept as a conversation was seeded, or a tool's answer).
 */
export function namesInputArtifact(message: { role: string; content?: unknown }): boolean {
  const what = message.role === 'user' ? 'input' : message.role === 'tool' ? 'output' : undefined
  return (
    what !== undefined &&
    typeof message.content === 'string' &&
    message.content.includes('kept whole as artifact out_') &&
    new RegExp(
      `\\[${what} of [\\d,]+ bytes \\([\\d,]+ lines?\\) kept whole as artifact out_[0-9a-f]{32};`,
    ).test(message.content)
  )
}

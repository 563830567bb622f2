import type { OutputCapture } from '../../ports/sandbox-runner.ts'
import { utf8Length } from '../../shared/utf8-length.ts'

/** VT Code's bounds for a command's preview: ≤ 6 KiB and ≤ 80 lines. */
export const PREVIEW_MAX_BYTES = 6 * 1024
export const PREVIEW_MAX_LINES = 80

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const ESC = '\u001b'
const BEL = '\u0007'
/** CSI, OSC, DCS/SOS/PM/APC strings, charset selections, other two-byte escapes, a stray ESC. */
const ANSI = new RegExp(
  [
    `${ESC}\\[[0-?]*[ -/]*[@-~]`,
    `${ESC}\\][^${BEL}${ESC}]*(?:${BEL}|${ESC}\\\\)?`,
    `${ESC}[PX^_][^${ESC}]*(?:${ESC}\\\\)?`,
    `${ESC}[()#][0-9A-Za-z]`,
    `${ESC}[@-Z\\\\^_\`a-z{|}~=>]`,
    ESC,
  ].join('|'),
  'g',
)
/** Drops C0 controls other than tab and LF, and DEL. */
function dropControls(text: string): string {
  let out = ''
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    if ((code < 32 && code !== 9 && code !== 10) || code === 127) continue
    out += ch
  }
  return out
}

/**
 * Terminal output as plain text: escape sequences and control characters removed, CRLF → LF,
 * and a carriage-return redraw (progress bars) reduced to what the terminal would finally show.
 */
export function plainText(raw: string): string {
  const lines = raw.replace(ANSI, '').split('\n')
  const text = lines
    .map((line, i) => {
      // CRs before a LF end the line (a scan: `/\r+\n/` is quadratic in a run of CRs)
      let end = line.length
      if (i < lines.length - 1) while (end > 0 && line.charCodeAt(end - 1) === 13) end--
      const kept = line.slice(0, end)
      const at = kept.lastIndexOf('\r', kept.length - 2)
      return (at >= 0 ? kept.slice(at + 1) : kept).replace(/\r$/, '')
    })
    .join('\n')
  return dropControls(text)
}

function cutBytesFromStart(text: string, max: number): string {
  const bytes = encoder.encode(text)
  if (bytes.byteLength <= max) return text
  return decoder.decode(bytes.subarray(0, max)).replace(/\uFFFD$/, '')
}

function cutBytesFromEnd(text: string, max: number): string {
  const bytes = encoder.encode(text)
  if (bytes.byteLength <= max) return text
  return decoder.decode(bytes.subarray(bytes.byteLength - max)).replace(/^\uFFFD/, '')
}

function firstLines(text: string, lines: number, bytes: number): string {
  return cutBytesFromStart(text.split('\n').slice(0, lines).join('\n'), bytes)
}

/** The last lines (a final newline kept and not counted as a line), within `bytes`. */
function lastLines(text: string, lines: number, bytes: number): string {
  const all = text.split('\n')
  const newline = all.at(-1) === ''
  if (newline) all.pop()
  return cutBytesFromEnd(`${all.slice(-lines).join('\n')}${newline ? '\n' : ''}`, bytes)
}

function countLines(text: string): number {
  if (text === '') return 0
  const n = text.split('\n').length
  return text.endsWith('\n') ? n - 1 : n
}

export interface OutputPreview {
  text: string
  /** The preview does not show every byte of the capture. */
  truncated: boolean
}

/**
 * The bounded preview of one capture: all of it when it fits, else its first third and its last
 * two thirds (commands matter most at their end) around one marker line, within `maxBytes` and
 * `maxLines` in all.
 */
export function outputPreview(
  output: OutputCapture,
  maxBytes: number = PREVIEW_MAX_BYTES,
  maxLines: number = PREVIEW_MAX_LINES,
): OutputPreview {
  const whole = output.omittedBytes === 0 ? plainText(output.head + output.tail) : undefined
  if (whole !== undefined && utf8Length(whole) <= maxBytes && countLines(whole) <= maxLines) {
    return { text: whole, truncated: false }
  }
  const captured = output.to - output.from
  const marker = `[… output truncated: ${captured} bytes in this capture; the full output is in spool_path …]`
  const headText = whole ?? plainText(output.head)
  const tailText = whole ?? plainText(output.tail)
  const room = maxBytes - utf8Length(marker) - 2
  if (room < 64 || maxLines < 3) {
    // Too small a budget for a marker: just the end.
    return { text: lastLines(tailText || headText, maxLines, maxBytes), truncated: true }
  }
  const headLines = Math.floor((maxLines - 1) / 3)
  const tailLines = maxLines - 1 - headLines
  const head = firstLines(headText, headLines, Math.floor(room / 3))
  const tail = lastLines(tailText, tailLines, room - utf8Length(head))
  const text = [head.replace(/\n$/, ''), marker, tail].filter((part) => part !== '').join('\n')
  return { text, truncated: true }
}

/** One Server-Sent Events frame: its fields as sent, `data` lines joined with "\n". */
export interface SseFrame {
  id?: string
  event?: string
  data: string
}

/**
 * The one Server-Sent Events decoder (the client's streams, the Chat Completions body, the tests'
 * reading of what the server sent): text goes in as it arrives, split anywhere, and each frame
 * comes out once its blank line has arrived. Lines end with `\n`, `\r\n` or `\r` (a `\r` at the
 * very end waits for the text after it); `:` lines are comments, skipped (or handed to
 * `onComment`); `data:` lines are joined with `\n`; one space after the colon is dropped; a frame
 * without a `data` line is not dispatched (as in the SSE specification), nor is a last frame
 * whose blank line never came (it may be torn). `id` and `event` belong to their own frame.
 */
export class SseDecoder {
  private pending = ''
  private id: string | undefined
  private event: string | undefined
  private data: string[] = []

  constructor(private readonly onComment?: (line: string) => void) {}

  /** The frames `text` completes, in order. */
  push(text: string): SseFrame[] {
    const frames: SseFrame[] = []
    const all = this.pending + text
    let start = 0
    for (;;) {
      const end = lineEnd(all, start)
      if (end === undefined) break
      const frame = this.line(all.slice(start, end.at))
      if (frame) frames.push(frame)
      start = end.next
    }
    this.pending = all.slice(start)
    return frames
  }

  private line(line: string): SseFrame | undefined {
    if (line === '') return this.dispatch()
    if (line.startsWith(':')) {
      this.onComment?.(line)
      return undefined
    }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') this.data.push(value)
    else if (field === 'event') this.event = value
    else if (field === 'id') this.id = value
    return undefined
  }

  private dispatch(): SseFrame | undefined {
    const { id, event, data } = this
    this.id = undefined
    this.event = undefined
    this.data = []
    if (data.length === 0) return undefined
    return {
      ...(id !== undefined ? { id } : {}),
      ...(event !== undefined ? { event } : {}),
      data: data.join('\n'),
    }
  }
}

/**
 * Where the line starting at `from` ends (`at`) and the next one starts, or undefined when the
 * text holds no complete line yet. A `\r` at the very end may be the first half of `\r\n`: it
 * waits for more text.
 */
function lineEnd(text: string, from: number): { at: number; next: number } | undefined {
  BREAK.lastIndex = from
  if (!BREAK.test(text)) return undefined
  const at = BREAK.lastIndex - 1
  if (text.charCodeAt(at) === 10) return { at, next: at + 1 }
  if (at + 1 === text.length) return undefined
  return { at, next: text.charCodeAt(at + 1) === 10 ? at + 2 : at + 1 }
}

const BREAK = /[\r\n]/g

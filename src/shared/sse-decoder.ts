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
 * `push(text)` answers the frames `text` completes, in order (char codes: 10 `\n`, 13 `\r`,
 * 58 `:`, 32 space).
 * Each line is read where it lies in the text (`line(text, start, end)`, never empty): only a
 * field's value, and a comment when asked for, is cut out of it; `data` holds the frame's data
 * lines joined so far.
 *
 * The work is linear in the text however it is split: a line that spans many pushes is kept as
 * its pieces, each looked at once for a line end, and joined once when its end arrives (joining
 * and scanning the whole line again at each push made a long line cost the square of its
 * length). `heldChars` says what the frame under way holds, its data lines and the line still
 * open together, for a reader that bounds it (a stream that never ends a line is held whole).
 */
export class SseDecoder {
  /** The text after the last line end, in the pieces it came in. */
  private pending: string[] = []
  private pendingChars = 0
  private id: string | undefined
  private event: string | undefined
  private data: string | undefined

  constructor(private readonly onComment?: (line: string) => void) {}

  /** Characters of the frame under way: its data lines so far and the line still open. */
  get heldChars(): number {
    return this.pendingChars + (this.data?.length ?? 0)
  }

  push(text: string): SseFrame[] {
    const last = this.pending.at(-1)
    if (last !== undefined && last.charCodeAt(last.length - 1) !== 13) {
      BREAK.lastIndex = 0
      if (!BREAK.test(text)) {
        // The open line goes on: only the new text is looked at.
        this.pending.push(text)
        this.pendingChars += text.length
        return []
      }
    }
    const frames: SseFrame[] = []
    const all = last === undefined ? text : this.pending.join('') + text
    let start = 0
    for (;;) {
      BREAK.lastIndex = start
      if (!BREAK.test(all)) break
      const end = BREAK.lastIndex - 1
      let next = end + 1
      if (all.charCodeAt(end) === 13) {
        if (next === all.length) break
        if (all.charCodeAt(next) === 10) next += 1
      }
      if (end === start) {
        const frame = this.dispatch()
        if (frame) frames.push(frame)
      } else this.line(all, start, end)
      start = next
    }
    const rest = all.slice(start)
    this.pending = rest === '' ? [] : [rest]
    this.pendingChars = rest.length
    return frames
  }

  private line(text: string, start: number, end: number): void {
    if (text.charCodeAt(start) === 58) {
      this.onComment?.(text.slice(start, end))
      return
    }
    let colon = start
    while (colon < end && text.charCodeAt(colon) !== 58) colon += 1
    let from = colon + 1
    if (from < end && text.charCodeAt(from) === 32) from += 1
    const value = text.slice(from, end)
    const field = colon - start
    if (field === 4 && text.startsWith('data', start)) {
      this.data = this.data === undefined ? value : this.data.concat('\n', value)
    } else if (field === 5 && text.startsWith('event', start)) this.event = value
    else if (field === 2 && text.startsWith('id', start)) this.id = value
  }

  private dispatch(): SseFrame | undefined {
    const { id, event, data } = this
    this.id = undefined
    this.event = undefined
    this.data = undefined
    if (data === undefined) return undefined
    if (event === undefined) return id === undefined ? { data } : { id, data }
    return id === undefined ? { event, data } : { id, event, data }
  }
}

const BREAK = /[\r\n]/g

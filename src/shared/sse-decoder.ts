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
 */
export class SseDecoder {
  private pending = ''
  private id: string | undefined
  private event: string | undefined
  private data: string | undefined

  constructor(private readonly onComment?: (line: string) => void) {}

  push(text: string): SseFrame[] {
    const frames: SseFrame[] = []
    const all = this.pending + text
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
    this.pending = all.slice(start)
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

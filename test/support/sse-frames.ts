/** A parsed Server-Sent Events frame (fields as sent; `data` lines joined with "\n"). */
export interface SseFrame {
  id?: string
  event?: string
  data: string
}

/** Splits an SSE body into frames, skipping comment lines (keep-alives). */
export function parseSse(text: string): { frames: SseFrame[]; comments: string[] } {
  const frames: SseFrame[] = []
  const comments: string[] = []
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue
    const frame: SseFrame = { data: '' }
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        comments.push(line)
        continue
      }
      const at = line.indexOf(':')
      const field = at < 0 ? line : line.slice(0, at)
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '')
      if (field === 'id') frame.id = value
      else if (field === 'event') frame.event = value
      else if (field === 'data') data.push(value)
    }
    if (data.length === 0 && frame.id === undefined && frame.event === undefined) continue
    frame.data = data.join('\n')
    frames.push(frame)
  }
  return { frames, comments }
}

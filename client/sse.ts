/** One Server-Sent Events frame: its fields, `data` lines joined by newlines. */
export interface SseFrame {
  id?: string
  event?: string
  data: string
}

/**
 * Reads SSE frames from a response body as they arrive. Comment lines (`: keep-alive`) and
 * frames without data are skipped; CRLF and LF line ends are both accepted; a last frame without
 * its closing blank line is dropped.
 */
export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  let fields: { id?: string; event?: string } = {}
  let data: string[] = []
  let open = false
  const take = (): SseFrame => {
    const frame = { ...fields, data: data.join('\n') }
    fields = {}
    data = []
    open = false
    return frame
  }
  for await (const line of lines(body)) {
    if (line === '') {
      if (open && data.length > 0) yield take()
      else take()
      continue
    }
    if (line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    open = true
    if (field === 'data') data.push(value)
    else if (field === 'id') fields.id = value
    else if (field === 'event') fields.event = value
  }
  // A frame the stream ended in the middle of (no blank line after it) is not dispatched: it
  // may be torn (SSE: "the incomplete event is not dispatched").
}

/** The body's lines without their line ends; a last line without one is yielded too. */
export async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buffer = ''
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let at = buffer.indexOf('\n')
      while (at >= 0) {
        const line = buffer.slice(0, at)
        yield line.endsWith('\r') ? line.slice(0, -1) : line
        buffer = buffer.slice(at + 1)
        at = buffer.indexOf('\n')
      }
    }
    buffer += decoder.decode()
    if (buffer !== '') yield buffer
  } finally {
    // A reader that stops early (a result frame, an abort) lets go of the connection.
    await reader.cancel().catch(() => {})
  }
}

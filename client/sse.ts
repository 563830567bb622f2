import { SseDecoder, type SseFrame } from '../src/shared/sse-decoder.ts'

export type { SseFrame }

/**
 * Reads SSE frames from a response body as they arrive, through the one SSE decoder
 * (src/shared/sse-decoder.ts): comment lines (`: keep-alive`) and frames without data are
 * skipped; `\n`, `\r\n` and `\r` line ends are accepted; a last frame without its closing blank
 * line is not dispatched (it may be torn).
 */
export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder()
  const sse = new SseDecoder()
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      yield* sse.push(decoder.decode(value, { stream: true }))
    }
    yield* sse.push(decoder.decode())
  } finally {
    // A reader that stops early (a result frame, an abort) lets go of the connection.
    await reader.cancel().catch(() => {})
  }
}

/**
 * The body's lines without their line ends (`\n`, a `\r` before it dropped): the NDJSON streams.
 * A last line without one is yielded too.
 */
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

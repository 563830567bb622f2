import { SseDecoder, type SseFrame } from '../src/shared/sse-decoder.ts'
import { TurnlineConnectionError, TurnlineProtocolError } from './errors.ts'

export type { SseFrame }

/**
 * The most one SSE frame or NDJSON line may hold: 64 Mi characters, four times the 16 MiB of
 * events one invocation may hold (its turn.result frame). A server that never ends one is not
 * held without end: the stream fails with a TurnlineProtocolError and the rest is not read.
 */
export const MAX_FRAME_CHARS = 64 * 1024 * 1024

export interface StreamReadOptions {
  /** No bytes for this long fails the read with a TurnlineConnectionError (none: no limit). */
  idleMs?: number | undefined
}

/**
 * Reads SSE frames from a response body as they arrive, through the one SSE decoder
 * (src/shared/sse-decoder.ts): comment lines (`: keep-alive`) and frames without data are
 * skipped; `\n`, `\r\n` and `\r` line ends are accepted; a last frame without its closing blank
 * line is not dispatched (it may be torn). A frame past {@link MAX_FRAME_CHARS}, or a silence
 * past `idleMs`, ends the reading with an error.
 */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
  options: StreamReadOptions = {},
): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder()
  const sse = new SseDecoder()
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await readWithin(reader, options.idleMs)
      if (done) break
      yield* sse.push(decoder.decode(value, { stream: true }))
      if (sse.heldChars > MAX_FRAME_CHARS) throw tooLong('an SSE frame')
    }
    yield* sse.push(decoder.decode())
  } finally {
    // A reader that stops early (a result frame, an abort) lets go of the connection.
    await reader.cancel().catch(() => {})
  }
}

/**
 * The body's lines without their line ends (`\n`, a `\r` before it dropped): the NDJSON streams.
 * A last line without one is yielded too. An open line is kept as its pieces and joined once
 * its end arrives; one past {@link MAX_FRAME_CHARS}, or a silence past `idleMs`, fails the
 * reading.
 */
export async function* lines(
  body: ReadableStream<Uint8Array>,
  options: StreamReadOptions = {},
): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let open: string[] = []
  let held = 0
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await readWithin(reader, options.idleMs)
      if (done) break
      const text = decoder.decode(value, { stream: true })
      let start = 0
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', start)) {
        open.push(text.slice(start, at))
        const line = open.join('')
        open = []
        held = 0
        start = at + 1
        yield line.endsWith('\r') ? line.slice(0, -1) : line
      }
      if (start < text.length) {
        open.push(text.slice(start))
        held += text.length - start
        if (held > MAX_FRAME_CHARS) throw tooLong('an NDJSON line')
      }
    }
    const rest = open.join('') + decoder.decode()
    if (rest !== '') yield rest
  } finally {
    // A reader that stops early (a result frame, an abort) lets go of the connection.
    await reader.cancel().catch(() => {})
  }
}

/**
 * At most `maxBytes` of a body as text (an error page: only its start is shown); the rest is
 * not read, and the connection is let go.
 */
export async function readUpTo(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return ''
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  let text = ''
  let read = 0
  try {
    while (read < maxBytes) {
      const { value, done } = await reader.read()
      if (done) break
      const piece = value.subarray(0, maxBytes - read)
      read += piece.length
      text += decoder.decode(piece, { stream: true })
    }
    return text + decoder.decode()
  } finally {
    await reader.cancel().catch(() => {})
  }
}

function tooLong(what: string): TurnlineProtocolError {
  return new TurnlineProtocolError(
    `${what} passed ${MAX_FRAME_CHARS / 1024 / 1024} Mi characters without its end; the rest was not read`,
    200,
  )
}

/** The next read, or a TurnlineConnectionError once `idleMs` pass without one. */
function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (idleMs === undefined) return reader.read()
  let timer: ReturnType<typeof setTimeout> | undefined
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TurnlineConnectionError(`the stream sent nothing for ${idleMs} ms`)),
      idleMs,
    )
  })
  return Promise.race([reader.read(), silence]).finally(() => clearTimeout(timer))
}

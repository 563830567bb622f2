import { APIError, OpenAIError } from 'openai/error'
import type { ChatCompletionChunk } from 'openai/resources/chat/completions'
import { type BodyReader, bodyReader } from '../../src/shared/body-reader.ts'
import { SseDecoder } from '../../src/shared/sse-decoder.ts'
import { ProviderStreamError } from './model-failure.ts'

/** Characters one Server-Sent Events frame of the answer may hold (16 Mi). */
export const MAX_FRAME_CHARS = 16 * 1024 * 1024

/**
 * The chunks of a streamed Chat Completions response, read straight from its body: the request
 * (headers, retries of the connection, HTTP errors as APIError) stays with the SDK
 * (`create(…).asResponse()`), the body is decoded here (read through `bodyReader`: the Node
 * fetch's own reader, else the web stream's) with one TextDecoder and string scanning
 * instead of the SDK's byte-array concatenation and three layers of async iterators, which cost
 * more CPU than the rest of a turn's model step. The frames come from the one SSE decoder
 * (src/shared/sse-decoder.ts: `\n`, `\r\n` or `\r` line ends, comments skipped, `data:` lines
 * joined, an unterminated last frame dropped); as the SDK's Stream for chat, `[DONE]` ends the
 * data, a chunk carrying `error` throws APIError (classified like an HTTP error without a
 * status), unparseable data throws its SyntaxError, and an aborted body ends the reading
 * quietly (the caller checks its signal). One frame may hold at most {@link MAX_FRAME_CHARS}
 * (a chunk is one delta; a provider that never ends a line is not held without end): past it
 * the read throws a ProviderStreamError (`frame_too_large`), as a malformed answer.
 *
 * One `read()` hands out the chunks of one read of the body, so that the stream's reader
 * (chat-stream.ts) turns them into events in its own loop instead of awaiting a generator per
 * chunk. A failing chunk ends its read: the chunks before it are handed out first and the
 * failure is thrown by the next `read()`, so that what came before it is delivered as it was.
 */
export class ChatChunkReader {
  private readonly reader: BodyReader
  private readonly decoder = new TextDecoder()
  private readonly sse = new SseDecoder()
  private failure: { error: unknown } | undefined
  private done = false
  /** The body was read to its end (or aborted): nothing to cancel. */
  finished = false

  constructor(private readonly response: Response) {
    const reader = bodyReader(response)
    if (!reader) throw new OpenAIError('Attempted to iterate over a response with no body')
    this.reader = reader
  }

  /** The chunks of the body's next read, or undefined once the body has ended. */
  async read(): Promise<ChatCompletionChunk[] | undefined> {
    if (this.failure) throw this.failure.error
    if (this.finished) return undefined
    let read: ReadableStreamReadResult<Uint8Array>
    try {
      read = await this.reader.read()
    } catch (error) {
      if (!isAbortError(error)) throw error
      this.finished = true
      return undefined
    }
    if (read.done) this.finished = true
    const text = read.done
      ? this.decoder.decode()
      : this.decoder.decode(read.value, { stream: true })
    const chunks: ChatCompletionChunk[] = []
    for (const event of this.frames(text)) {
      if (this.done) continue
      if (event.data.startsWith('[DONE]')) {
        this.done = true
        continue
      }
      if (event.event?.startsWith('thread.')) continue
      try {
        chunks.push(this.chunk(event.data))
      } catch (error) {
        this.failure = { error }
        this.finished = false
        break
      }
    }
    return chunks
  }

  private frames(text: string) {
    const frames = this.sse.push(text)
    if (this.sse.heldChars > MAX_FRAME_CHARS) {
      this.finished = false
      throw new ProviderStreamError(
        `the answer's stream holds a frame of more than ${MAX_FRAME_CHARS} characters`,
        'frame_too_large',
        'server',
      )
    }
    return frames
  }

  /** Cancels the body (after an early stop or a failure); never rejects. */
  cancel(): Promise<void> {
    return this.reader.cancel().catch(() => undefined)
  }

  private chunk(text: string): ChatCompletionChunk {
    const data = JSON.parse(text) as ChatCompletionChunk & { error?: unknown }
    if (data?.error) throw new APIError(undefined, data.error, undefined, this.response.headers)
    return data
  }
}

/** The chunks of `response` one by one; stopping early cancels the body. */
export async function* chatChunks(response: Response): AsyncGenerator<ChatCompletionChunk> {
  const reader = new ChatChunkReader(response)
  try {
    for (;;) {
      const chunks = await reader.read()
      if (chunks === undefined) return
      for (const chunk of chunks) yield chunk
    }
  } finally {
    if (!reader.finished) await reader.cancel()
  }
}

function isAbortError(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError'
  )
}

import { APIError, OpenAIError } from 'openai/error'
import type { ChatCompletionChunk } from 'openai/resources/chat/completions'
import { bodyReader } from '../../src/shared/body-reader.ts'
import { SseDecoder } from '../../src/shared/sse-decoder.ts'

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
 * status), unparseable data throws its SyntaxError, and an aborted body ends the iteration
 * quietly (the caller checks its signal). Stopping early cancels the body.
 */
export async function* chatChunks(response: Response): AsyncGenerator<ChatCompletionChunk> {
  const reader = bodyReader(response)
  if (!reader) throw new OpenAIError('Attempted to iterate over a response with no body')
  const decoder = new TextDecoder()
  const sse = new SseDecoder()
  let finished = false
  let done = false
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>
      try {
        read = await reader.read()
      } catch (error) {
        if (isAbortError(error)) {
          finished = true
          return
        }
        throw error
      }
      const text = read.done ? decoder.decode() : decoder.decode(read.value, { stream: true })
      for (const event of sse.push(text)) {
        if (done) continue
        if (event.data.startsWith('[DONE]')) {
          done = true
          continue
        }
        if (event.event?.startsWith('thread.')) continue
        const data = JSON.parse(event.data) as ChatCompletionChunk & { error?: unknown }
        if (data?.error) throw new APIError(undefined, data.error, undefined, response.headers)
        yield data
      }
      if (read.done) break
    }
    finished = true
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined)
  }
}

function isAbortError(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError'
  )
}

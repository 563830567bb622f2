import { APIError, OpenAIError } from 'openai'
import type { ChatCompletionChunk } from 'openai/resources/chat/completions'

/**
 * The chunks of a streamed Chat Completions response, read straight from its body: the request
 * (headers, retries of the connection, HTTP errors as APIError) stays with the SDK
 * (`create(…).asResponse()`), the body is decoded here with one TextDecoder and string scanning
 * instead of the SDK's byte-array concatenation and three layers of async iterators, which cost
 * more CPU than the rest of a turn's model step. Same behaviour as the SDK's Stream for chat:
 * Server-Sent Events split on blank lines (`\n`, `\r\n` or `\r`), `:` comments skipped, `data:`
 * lines joined with `\n`, `[DONE]` ends the data, an event that does not end with a blank line
 * is dropped, a chunk carrying `error` throws APIError (classified like an HTTP error without a
 * status), unparseable data throws its SyntaxError, and an aborted body ends the iteration
 * quietly (the caller checks its signal). Stopping early cancels the body.
 */
export async function* chatChunks(response: Response): AsyncGenerator<ChatCompletionChunk> {
  if (!response.body) throw new OpenAIError('Attempted to iterate over a response with no body')
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const frame = new SseFrame()
  let pending = ''
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
      pending += read.done ? decoder.decode() : decoder.decode(read.value, { stream: true })
      let start = 0
      for (;;) {
        const end = lineEnd(pending, start)
        if (end === undefined) break
        const event = frame.line(pending.slice(start, end.at))
        start = end.next
        if (!event || done) continue
        if (event.data.startsWith('[DONE]')) {
          done = true
          continue
        }
        if (event.name?.startsWith('thread.')) continue
        const data = JSON.parse(event.data) as ChatCompletionChunk & { error?: unknown }
        if (data?.error) throw new APIError(undefined, data.error, undefined, response.headers)
        yield data
      }
      pending = pending.slice(start)
      if (read.done) break
    }
    finished = true
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined)
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

/** Collects the fields of one Server-Sent Event; a blank line completes it. */
class SseFrame {
  private name: string | null = null
  private data: string[] = []

  line(line: string): { name: string | null; data: string } | undefined {
    if (line === '') {
      if (this.name === null && this.data.length === 0) return undefined
      const event = { name: this.name, data: this.data.join('\n') }
      this.name = null
      this.data = []
      return event
    }
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') this.name = value
    else if (field === 'data') this.data.push(value)
    return undefined
  }
}

function isAbortError(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError'
  )
}

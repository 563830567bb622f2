const STREAMED = /^(text\/event-stream|application\/x-ndjson)/

/**
 * The body of a streamed answer (SSE, NDJSON), or null for any other. The content type is read
 * first: reading `body` of an answer built from a string turns it into a stream (on Node the
 * server then writes it chunk by chunk instead of in one piece).
 */
export function streamedBody(response: Response): ReadableStream<Uint8Array> | null {
  return STREAMED.test(response.headers.get('content-type') ?? '') ? response.body : null
}

/** Passes the stream through and calls `done` once when it ends, fails or is cancelled. */
export function whenBodyEnds(
  source: ReadableStream<Uint8Array>,
  done: (extra?: Record<string, unknown>) => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  let ended = false
  const end = (extra?: Record<string, unknown>) => {
    if (ended) return
    ended = true
    done(extra)
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: finished } = await reader.read()
        if (finished) {
          controller.close()
          end()
        } else {
          controller.enqueue(value)
        }
      } catch (error) {
        end({ stream_error: String(error) })
        controller.error(error)
      }
    },
    async cancel(reason) {
      end({ aborted: true })
      await reader.cancel(reason)
    },
  })
}

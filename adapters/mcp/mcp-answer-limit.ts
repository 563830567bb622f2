import { TurnlineError } from '../../src/contract/errors.ts'

/** What an answer may hold besides its result: the JSON-RPC envelope, SSE framing, escapes. */
export const MCP_PROTOCOL_BYTES = 1024 * 1024

/**
 * The fetch of a session's MCP servers with each answer's body bounded to `maxBytes`. The SDK
 * reads an answer whole (`response.json()`, or an SSE stream's events, a partial event held
 * until its end), so a server that answers without end — a tenant's, or one it points at — grew
 * the server process's memory for as long as it sent. Past `maxBytes` (a declared
 * Content-Length at once, else as the bytes arrive) the body fails with a `tool_error` naming
 * the bound, which the call's result reports to the model, and the rest is not read.
 */
export function limitAnswerBytes(fetch: typeof globalThis.fetch, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init)
    const body = response.body
    if (!body) return response
    const declared = Number(response.headers.get('content-length') ?? '')
    if (Number.isSafeInteger(declared) && declared > maxBytes) {
      await body.cancel().catch(() => undefined)
      throw tooLarge(maxBytes)
    }
    let seen = 0
    const bounded = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength
          if (seen > maxBytes) controller.error(tooLarge(maxBytes))
          else controller.enqueue(chunk)
        },
      }),
    )
    return new Response(bounded, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

function tooLarge(maxBytes: number): TurnlineError {
  return new TurnlineError(
    'tool_error',
    `the MCP server's answer exceeded ${maxBytes} bytes (TURNLINE_TOOL_MAX_OUTPUT_BYTES and ` +
      '1 MiB of protocol); it was not read',
    { details: { max_bytes: maxBytes } },
  )
}

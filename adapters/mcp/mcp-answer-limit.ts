import { TurnlineError } from '../../src/contract/errors.ts'

/** What an answer may hold besides its result: the JSON-RPC envelope, SSE framing, escapes. */
export const MCP_PROTOCOL_BYTES = 1024 * 1024

/**
 * What an answer to anything but a tool call may hold (initialize, a page of `tools/list`, a
 * ping), and what the tools of one listing may hold together (sdk-mcp-client.ts listTools):
 * a tool result may be kept as a long output, a tool list is read into memory whole, page by
 * page, and offered to the model in every request.
 */
export const MCP_LIST_BYTES = 4 * 1024 * 1024

/** Whether a request's body is (or holds) a JSON-RPC `tools/call`, whose answer may be long. */
function callsTool(init: RequestInit | undefined): boolean {
  if (typeof init?.body !== 'string') return false
  try {
    const sent: unknown = JSON.parse(init.body)
    const messages = Array.isArray(sent) ? sent : [sent]
    return messages.some(
      (message) =>
        typeof message === 'object' && message !== null && message.method === 'tools/call',
    )
  } catch {
    return false
  }
}

/**
 * The fetch of a session's MCP servers with each answer's body bounded to `maxBytes`. The SDK
 * reads an answer whole (`response.json()`, or an SSE stream's events, a partial event held
 * until its end), so a server that answers without end — a tenant's, or one it points at — grew
 * the server process's memory for as long as it sent. Past `maxBytes` (a declared
 * Content-Length at once, else as the bytes arrive) the body fails with a `tool_error` naming
 * the bound, which the call's result reports to the model, and the rest is not read. A POST
 * that is not a tool call is answered within MCP_LIST_BYTES; a GET (the listening stream, which
 * may carry a resumed call's result) within `maxBytes`.
 */
export function limitAnswerBytes(fetch: typeof globalThis.fetch, bound: number): typeof fetch {
  return async (input, init) => {
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET')
    const maxBytes =
      method.toUpperCase() === 'POST' && !callsTool(init) ? Math.min(bound, MCP_LIST_BYTES) : bound
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

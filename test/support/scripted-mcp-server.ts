import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One JSON-RPC message a scripted server received (a POST's body, or each of a batch). */
export interface ReceivedMessage {
  id?: string | number
  method?: string
  params?: Record<string, unknown>
  result?: unknown
  error?: { code: number; message: string }
}

/**
 * What the script does with a request: answer it with a JSON body (`json`), an SSE stream of
 * messages (`sse`), a JSON body already written (`body`: deeper than JSON.stringify goes), or
 * nothing at all (`hang`: the head is never sent).
 */
export type ScriptedAnswer =
  | { json: unknown; status?: number; delayMs?: number }
  | { body: string }
  | { sse: unknown[]; status?: number }
  | { hang: true }

/**
 * An MCP server written by hand over node:http, for what the SDK's own server never does: each
 * POST's JSON-RPC message and each GET go to `script`, which answers as a broken or hostile
 * server would. `initialize` is answered by default (session `s-1`), `notifications/*` with 202.
 */
export interface ScriptedMcpServer {
  url: string
  readonly received: ReceivedMessage[]
  readonly gets: number
  close(): Promise<void>
}

export const initializeResult = (id: unknown) => ({
  jsonrpc: '2.0',
  id,
  result: {
    protocolVersion: '2025-06-18',
    capabilities: { tools: { listChanged: true } },
    serverInfo: { name: 'scripted', version: '1.0.0' },
  },
})

export async function startScriptedMcpServer(
  script: (message: ReceivedMessage | 'GET') => ScriptedAnswer | undefined,
): Promise<ScriptedMcpServer> {
  const received: ReceivedMessage[] = []
  let gets = 0
  const held: ServerResponse[] = []
  const answer = (response: ServerResponse, reply: ScriptedAnswer) => {
    if ('hang' in reply) {
      held.push(response)
      return
    }
    const headers = { 'mcp-session-id': 's-1' }
    if ('body' in reply) {
      response.writeHead(200, { ...headers, 'content-type': 'application/json' })
      response.end(reply.body)
      return
    }
    if ('json' in reply && reply.delayMs) {
      const { delayMs, ...now } = reply
      setTimeout(() => answer(response, now), delayMs)
      return
    }
    if ('json' in reply) {
      response.writeHead(reply.status ?? 200, { ...headers, 'content-type': 'application/json' })
      response.end(JSON.stringify(reply.json))
      return
    }
    response.writeHead(reply.status ?? 200, { ...headers, 'content-type': 'text/event-stream' })
    for (const message of reply.sse)
      response.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)
    response.end()
  }
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'GET') {
      gets += 1
      answer(response, script('GET') ?? { json: {}, status: 405 })
      return
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end()
      return
    }
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedMessage
    received.push(message)
    const reply = script(message)
    if (reply) return answer(response, reply)
    if (message.method === 'initialize')
      return answer(response, { json: initializeResult(message.id) })
    response.writeHead(202, { 'mcp-session-id': 's-1' }).end()
  }
  const http = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy())
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    get gets() {
      return gets
    },
    async close() {
      for (const response of held.splice(0)) response.destroy()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}

import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import * as z from 'zod'

/**
 * A real MCP server for tests: the official SDK's McpServer behind its Streamable HTTP
 * transport (stateful: one MCP session per `initialize`, `Mcp-Session-Id`, a GET stream for
 * notifications). Tools:
 *
 * - `search` {q}: text result, read-only;
 * - `slow` {} (with `slow`): text "slow answer", after 1.5 s;
 * - `broken` {}: a tool error (`isError`);
 * - `unlock` {}: registers the tool `secret` for this MCP session, which sends
 *   `notifications/tools/list_changed` (on the GET stream when one is open, and on the call's
 *   own response stream);
 * - `secret` {} (after unlock): text "the secret".
 *
 * `addTool(name)` adds a tool to every open MCP session (a deployment-wide change); `forget()`
 * drops every MCP session, so the next request with an old session id gets 404; `refuse(status)`
 * answers every request with that status and a body that echoes its Authorization header (as an
 * upstream's error page may), until `refuse(undefined)`.
 */
export interface TestMcpServer {
  url: string
  /** Every HTTP request received: method, MCP session id, authorization, JSON-RPC method. */
  readonly requests: { method: string; session?: string; auth?: string; rpc?: string }[]
  addTool(name: string, text: string): void
  forget(): void
  refuse(status: number | undefined): void
  sessions(): number
  close(): Promise<void>
}

export interface McpServerOptions {
  /** `broken`'s error names the Authorization header it was sent. */
  echoAuth?: boolean
  /** Serve the `slow` tool too. */
  slow?: boolean
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport
  server: McpServer
}

function newServer(extra: Map<string, string>, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'test-mcp', version: '1.0.0' })
  server.registerTool(
    'search',
    {
      description: 'Search the docs',
      inputSchema: { q: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ q }) => ({ content: [{ type: 'text', text: `results for ${q}: two hits` }] }),
  )
  if (options.slow) {
    server.registerTool('slow', { description: 'Answers after 1.5 s' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      return { content: [{ type: 'text', text: 'slow answer' }] }
    })
  }
  server.registerTool('broken', { description: 'Always fails' }, async (ctx) => {
    // With `echoAuth`, as a careless server's error may: the credentials it was sent.
    const auth = options.echoAuth && ctx.requestInfo?.headers.authorization
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: `the backend is down${auth ? ` (sent Authorization: ${auth})` : ''}`,
        },
      ],
    }
  })
  server.registerTool('unlock', { description: 'Unlock the secret tool' }, async (ctx) => {
    if (!extra.has('secret')) {
      extra.set('secret', 'the secret')
      server.registerTool('secret', { description: 'Tell the secret' }, async () => ({
        content: [{ type: 'text', text: 'the secret' }],
      }))
      await ctx.sendNotification({ method: 'notifications/tools/list_changed' })
    }
    return { content: [{ type: 'text', text: 'unlocked' }] }
  })
  return server
}

export async function startMcpServer(options: McpServerOptions = {}): Promise<TestMcpServer> {
  const sessions = new Map<string, Session>()
  const requests: TestMcpServer['requests'] = []
  const global = new Map<string, string>()
  let refusing: number | undefined

  const handle = async (request: Request): Promise<Response> => {
    const session = request.headers.get('mcp-session-id') ?? undefined
    let body: unknown
    if (request.method === 'POST') body = await request.json()
    const rpc =
      typeof body === 'object' && body !== null && 'method' in body
        ? String((body as { method: unknown }).method)
        : undefined
    requests.push({
      method: request.method,
      ...(session ? { session } : {}),
      ...(request.headers.get('authorization')
        ? { auth: request.headers.get('authorization') as string }
        : {}),
      ...(rpc ? { rpc } : {}),
    })
    if (refusing !== undefined) {
      const auth = request.headers.get('authorization')
      return Response.json({ error: 'refused', authorization: auth }, { status: refusing })
    }
    if (session) {
      const known = sessions.get(session)
      if (!known) return Response.json({ error: 'unknown session' }, { status: 404 })
      return known.transport.handleRequest(request, { parsedBody: body })
    }
    if (rpc !== 'initialize') return Response.json({ error: 'no session' }, { status: 400 })
    const extra = new Map(global)
    const server = newServer(extra, options)
    for (const [name, text] of global) {
      server.registerTool(name, { description: `Added: ${name}` }, async () => ({
        content: [{ type: 'text', text }],
      }))
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server })
      },
    })
    await server.connect(transport)
    return transport.handleRequest(request, { parsedBody: body })
  }

  const http = serve({ fetch: handle, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => http.once('listening', () => resolve()))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    addTool(name, text) {
      global.set(name, text)
      for (const { server } of sessions.values()) {
        server.registerTool(name, { description: `Added: ${name}` }, async () => ({
          content: [{ type: 'text', text }],
        }))
      }
    },
    forget() {
      for (const { server } of sessions.values()) void server.close()
      sessions.clear()
    },
    refuse(status) {
      refusing = status
    },
    sessions: () => sessions.size,
    async close() {
      for (const { server } of sessions.values()) await server.close().catch(() => {})
      sessions.clear()
      await new Promise<void>((resolve) => {
        http.close(() => resolve())
        ;(http as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
      })
    },
  }
}

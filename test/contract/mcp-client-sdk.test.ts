import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { limitAnswerBytes } from '../../adapters/mcp/mcp-answer-limit.ts'
import { createSdkMcpClient } from '../../adapters/mcp/sdk-mcp-client.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { McpConnection } from '../../src/ports/mcp-client.ts'
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts'

/** The SDK-backed MCP client against a real MCP server (the SDK's, over Streamable HTTP). */
let server: TestMcpServer
const client = createSdkMcpClient()
const open: McpConnection[] = []

beforeAll(async () => {
  server = await startMcpServer()
})
afterAll(async () => {
  await server?.close()
})
beforeEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()))
  server.requests.length = 0
})

const endpoint = () => ({
  name: 'docs',
  url: server.url,
  headers: { authorization: 'Bearer mcp-token' },
  timeoutMs: 5000,
})

async function connect(resume?: { sessionId?: string; protocolVersion?: string }) {
  let changed = 0
  const connection = await client.connect(endpoint(), {
    ...(resume ? { resume } : {}),
    onToolsChanged: () => {
      changed += 1
    },
  })
  open.push(connection)
  return { connection, changed: () => changed }
}

const until = async (check: () => boolean, ms = 3000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('SDK MCP client', () => {
  it('initializes, lists tools with their read-only hint and sends the configured headers', async () => {
    const { connection } = await connect()
    const tools = await connection.listTools()
    expect(tools.map((t) => t.name)).toEqual(['search', 'broken', 'unlock'])
    expect(tools[0]).toMatchObject({
      name: 'search',
      description: 'Search the docs',
      readOnlyHint: true,
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    })
    expect(tools[1]?.readOnlyHint).toBeUndefined()
    expect(connection.session.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(connection.session.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(server.requests[0]).toMatchObject({ rpc: 'initialize', auth: 'Bearer mcp-token' })
    expect(server.requests.every((r) => r.auth === 'Bearer mcp-token')).toBe(true)
  })

  it('calls tools: text content, and a tool error as isError', async () => {
    const { connection } = await connect()
    expect(await connection.callTool('search', { q: 'serde' })).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'results for serde: two hits' }],
    })
    expect(await connection.callTool('broken', {})).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'the backend is down' }],
    })
  })

  it('resumes an MCP session without initializing again', async () => {
    const first = await connect()
    const session = first.connection.session
    await first.connection.close()
    server.requests.length = 0
    const { connection, changed } = await connect(session)
    await connection.callTool('search', { q: 'x' })
    expect(server.requests.map((r) => r.rpc ?? r.method)).not.toContain('initialize')
    expect(server.requests.every((r) => r.session === session.sessionId)).toBe(true)
    expect(changed()).toBe(0)
  })

  it('a forgotten MCP session is started anew, and the catalog is reported stale', async () => {
    const first = await connect()
    const old = first.connection.session
    await first.connection.close()
    server.forget()
    server.requests.length = 0
    const { connection, changed } = await connect(old)
    expect(await connection.callTool('search', { q: 'y' })).toMatchObject({ isError: false })
    expect(connection.session.sessionId).not.toBe(old.sessionId)
    expect(changed()).toBe(1)
    expect(server.requests.filter((r) => r.rpc === 'initialize')).toHaveLength(1)
  })

  it("hears tools/list_changed on a call's stream and on the listening stream", async () => {
    const { connection, changed } = await connect()
    await connection.callTool('unlock', {})
    await until(() => changed() >= 1)
    expect((await connection.listTools()).map((t) => t.name)).toContain('secret')
    const before = changed()
    // Give the listening GET stream a moment to open, then change every session's tools.
    await until(() => server.requests.some((r) => r.method === 'GET'))
    server.addTool('late', 'late tool')
    await until(() => changed() > before)
    expect((await connection.listTools()).map((t) => t.name)).toContain('late')
  })

  it('faults are tool_error naming the server', async () => {
    const down = await client
      .connect(
        { name: 'gone', url: 'http://127.0.0.1:9/mcp', headers: {}, timeoutMs: 2000 },
        { onToolsChanged: () => {} },
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(isTurnlineError(down, 'tool_error')).toBe(true)
    expect((down as Error).message).toMatch(/^MCP server gone: could not connect/)
    const { connection } = await connect()
    const unknown = await connection.callTool('nope', {}).catch((error: unknown) => error)
    expect(unknown).toMatchObject({ isError: true })
  })
})

describe("SDK MCP client: the deployment's servers and a session's go through their own fetch", () => {
  it('an operator endpoint uses operatorFetch, any other fetch', async () => {
    const used: string[] = []
    const via =
      (name: string): typeof fetch =>
      (input, init) => {
        used.push(name)
        return fetch(input, init)
      }
    const both = createSdkMcpClient({ fetch: via('session'), operatorFetch: via('operator') })
    for (const operator of [true, false]) {
      used.length = 0
      const connection = await both.connect(
        { ...endpoint(), ...(operator ? { operator } : {}) },
        { onToolsChanged: () => {} },
      )
      open.push(connection)
      await connection.listTools()
      expect(new Set(used)).toEqual(new Set([operator ? 'operator' : 'session']))
    }
  })
})

describe('SDK MCP client with its answers bounded (limitAnswerBytes)', () => {
  it('an answer past the bound fails the call as tool_error; smaller ones pass', async () => {
    // The test server answers calls on an SSE stream: the SDK hears the stream fail and the call
    // ends at its timeout (an answer in JSON fails at once, naming the bound: tenant-fetch.test.ts).
    const bounded = createSdkMcpClient({ fetch: limitAnswerBytes(fetch, 64 * 1024) })
    const connection = await bounded.connect(
      { ...endpoint(), timeoutMs: 1000 },
      { onToolsChanged: () => {} },
    )
    open.push(connection)
    server.addTool('dump', 'x'.repeat(200_000))
    const large = await connection.callTool('dump', {}).catch((error: unknown) => error)
    expect(isTurnlineError(large, 'tool_error')).toBe(true)
    expect(await connection.callTool('search', { q: 'x' })).toMatchObject({ isError: false })
  })
})

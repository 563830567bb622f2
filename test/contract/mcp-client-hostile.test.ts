import { afterEach, describe, expect, it } from 'vitest'
import { limitAnswerBytes, MCP_PROTOCOL_BYTES } from '../../adapters/mcp/mcp-answer-limit.ts'
import { createSdkMcpClient } from '../../adapters/mcp/sdk-mcp-client.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  type ReceivedMessage,
  type ScriptedAnswer,
  type ScriptedMcpServer,
  startScriptedMcpServer,
} from '../support/scripted-mcp-server.ts'

/**
 * The SDK MCP client against servers that break the protocol on purpose (a hand-written server:
 * the SDK's own never does). Every answer a server gives must end, be bounded and stay with the
 * request it answers, whatever the server sends.
 */
let server: ScriptedMcpServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The bound the deployment's fetch has by default: 64 MiB of kept output and the protocol's. */
const DEFAULT_BOUND = 64 * 1024 * 1024 + MCP_PROTOCOL_BYTES

async function connectTo(
  script: (message: ReceivedMessage | 'GET') => ScriptedAnswer | undefined,
  options: {
    timeoutMs?: number
    resume?: { sessionId: string; protocolVersion: string }
    signal?: AbortSignal
  } = {},
) {
  server = await startScriptedMcpServer(script)
  const client = createSdkMcpClient({ fetch: limitAnswerBytes(fetch, DEFAULT_BOUND) })
  return client.connect(
    { name: 'hostile', url: server.url, headers: {}, timeoutMs: options.timeoutMs ?? 2000 },
    {
      onToolsChanged: () => {},
      ...(options.resume ? { resume: options.resume } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    },
  )
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  inputSchema: { type: 'object', properties: {} },
  ...extra,
})

const listAnswer = (message: ReceivedMessage, tools: unknown[], nextCursor?: string) => ({
  json: {
    jsonrpc: '2.0',
    id: message.id,
    result: { tools, ...(nextCursor ? { nextCursor } : {}) },
  },
})

/** An object nested 100,000 levels deep, as text (600 KB): past any recursive walk's stack. */
const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  )

describe('SDK MCP client against a hostile server', () => {
  it('a resumed session whose listening stream never answers fails at the timeout', async () => {
    const error = await failure(
      connectTo((m) => (m === 'GET' ? { hang: true } : undefined), {
        timeoutMs: 300,
        resume: { sessionId: 's-1', protocolVersion: '2025-06-18' },
      }),
    )
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toMatch(/^MCP server hostile: could not connect: .*timed out/)
  })

  it('a server that never answers the initialized notification fails the connection at the timeout', async () => {
    const error = await failure(
      connectTo(
        (m) =>
          m !== 'GET' && m.method === 'notifications/initialized' ? { hang: true } : undefined,
        {
          timeoutMs: 300,
        },
      ),
    )
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toMatch(/^MCP server hostile: could not connect: .*timed out/)
  })

  it('a page of tools/list past 4 MiB is not read', async () => {
    const connection = await connectTo((m) =>
      m !== 'GET' && m.method === 'tools/list'
        ? listAnswer(m, [tool('big', { description: 'x'.repeat(5 * 1024 * 1024) })])
        : undefined,
    )
    const error = await failure(connection.listTools())
    await connection.close()
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toMatch(/exceeded 4194304 bytes/)
  })

  it('the pages of one listing together are bounded too', async () => {
    const connection = await connectTo((m) => {
      if (m === 'GET' || m.method !== 'tools/list') return undefined
      const page = Number((m.params?.cursor as string | undefined) ?? '0')
      return listAnswer(
        m,
        [tool(`t${page}`, { description: 'y'.repeat(1000 * 1024) })],
        `${page + 1}`,
      )
    })
    const error = await failure(connection.listTools())
    await connection.close()
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toMatch(/tools together exceed 4194304 bytes/)
    // Four pages of 1000 KiB fit; the fifth passes the bound and no sixth is asked for.
    expect(server?.received.filter((m) => m.method === 'tools/list')).toHaveLength(5)
  })

  it('the pages of one listing together are held to one timeout', async () => {
    const connection = await connectTo(
      (m) => {
        if (m === 'GET' || m.method !== 'tools/list') return undefined
        const page = Number((m.params?.cursor as string | undefined) ?? '0')
        return { ...listAnswer(m, [tool(`t${page}`)], `${page + 1}`), delayMs: 100 }
      },
      { timeoutMs: 450 },
    )
    const error = await failure(connection.listTools())
    await connection.close()
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toMatch(/could not list its tools: .*timed out/)
    expect(server?.received.filter((m) => m.method === 'tools/list').length).toBeLessThan(10)
  })

  it("a tool call may still answer past 4 MiB (its bound is the kept output's)", async () => {
    const text = 'z'.repeat(5 * 1024 * 1024)
    const connection = await connectTo((m) =>
      m !== 'GET' && m.method === 'tools/call'
        ? { json: { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text }] } } }
        : undefined,
    )
    const outcome = await connection.callTool('dump', {})
    await connection.close()
    expect(outcome.content).toEqual([{ type: 'text', text }])
  })

  it('a tool nested past 64 levels fails the listing, before anything recursive reads it', async () => {
    const connection = await connectTo((m) =>
      m !== 'GET' && m.method === 'tools/list'
        ? {
            body: `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"tools":[{"name":"deep","inputSchema":{"type":"object","properties":${deep}}}]}}`,
          }
        : undefined,
    )
    const error = await failure(connection.listTools())
    await connection.close()
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toMatch(/a tool nests deeper than 64 levels/)
  })

  it('a result nested past 64 levels fails the call, not the turn', async () => {
    const connection = await connectTo((m) =>
      m !== 'GET' && m.method === 'tools/call'
        ? {
            body: `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[],"structuredContent":${deep}}}`,
          }
        : undefined,
    )
    const error = await failure(connection.callTool('deep', {}))
    await connection.close()
    expect(isTurnlineError(error, 'tool_error')).toBe(true)
    expect((error as Error).message).toBe(
      'MCP server hostile: its result nests deeper than 64 levels',
    )
  })

  it('a resumed connection waiting on the listening stream ends with its signal', async () => {
    const controller = new AbortController()
    const connecting = failure(
      connectTo((m) => (m === 'GET' ? { hang: true } : undefined), {
        timeoutMs: 60_000,
        resume: { sessionId: 's-1', protocolVersion: '2025-06-18' },
        signal: controller.signal,
      }),
    )
    while ((server?.gets ?? 0) === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    controller.abort(new Error('turn cancelled'))
    expect(await connecting).toBeDefined()
  })

  it('refuses what a server asks of it (sampling, roots, elicitation) and ignores strange ids', async () => {
    const connection = await connectTo((m) => {
      if (m === 'GET' || m.method !== 'tools/call') return undefined
      return {
        sse: [
          {
            jsonrpc: '2.0',
            id: 'a',
            method: 'sampling/createMessage',
            params: { messages: [], maxTokens: 9 },
          },
          { jsonrpc: '2.0', id: 'b', method: 'roots/list' },
          {
            jsonrpc: '2.0',
            id: 'c',
            method: 'elicitation/create',
            params: { message: 'token?', requestedSchema: { type: 'object', properties: {} } },
          },
          // An answer to a request never sent, then the call's own.
          { jsonrpc: '2.0', id: 999, result: { content: [{ type: 'text', text: 'not yours' }] } },
          { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'yours' }] } },
        ],
      }
    })
    expect(await connection.callTool('ask', {})).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'yours' }],
    })
    const until = Date.now() + 3000
    while ((server?.received.filter((m) => m.error).length ?? 0) < 3 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await connection.close()
    const refusals = server?.received.filter((m) => m.error) ?? []
    expect(refusals.map((m) => [m.id, m.error?.code])).toEqual([
      ['a', -32601],
      ['b', -32601],
      ['c', -32601],
    ])
    expect(server?.received.some((m) => m.result !== undefined)).toBe(false)
  })
})

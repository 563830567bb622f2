import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSdkMcpClient } from '../../adapters/mcp/sdk-mcp-client.ts'
import type { EngineState } from '../../src/contract/engine-state.ts'
import { McpPool } from '../../src/core/mcp/mcp-pool.ts'
import { mcpToolHandler } from '../../src/core/mcp/mcp-tool-handler.ts'
import { callHttpTool } from '../../src/core/tools/http-tool-call.ts'
import type { ToolRunContext } from '../../src/core/tools/tool-handler.ts'
import { stoppedCallOutput } from '../../src/core/turn/invocation-deadline.ts'
import { localLookupTool, localToolPolicy } from '../support/local-http-tool.ts'
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts'

/**
 * An HTTP or MCP tool call started with the platform's timeout near (Lambda: the tool round's window,
 * the time left less the turn's stop margin) is cut to that window, whatever its own timeout:
 * its result says it was stopped and is not run again. Without a window it runs to its answer.
 */
let server: Server
let port = 0
let mcp: TestMcpServer
/** An MCP server's address that takes connections and never answers one (initialize hangs). */
let silent: Server
let silentUrl = ''

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume()
    // Answers after 1.5 s.
    setTimeout(() => response.writeHead(200).end('looked up'), 1_500)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  mcp = await startMcpServer({ slow: true })
  silent = createServer((request) => request.resume())
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`
})

afterAll(async () => {
  await mcp.close()
  for (const open of [server, silent]) {
    open.closeAllConnections()
    await new Promise<void>((resolve) => open.close(() => resolve()))
  }
})

function call(windowMs?: number) {
  return callHttpTool(
    localToolPolicy(port, 30_000),
    {
      tenant: 't',
      sessionId: 's',
      toolCallId: 'c',
      now: Date.now(),
      ...(windowMs === undefined ? {} : { windowMs }),
    },
    localLookupTool(port, { timeout_ms: 120_000 }),
    '{}',
  )
}

describe('an HTTP tool call and the platform timeout', () => {
  it('is stopped at the end of its window, reported as stopped, not as its own timeout', async () => {
    const result = await call(200)
    expect(result).toEqual({ ok: false, output: stoppedCallOutput('lookup', 200) })
    expect(result.output).toContain('not run again')
  })

  it('runs to its answer without a window, or with a window longer than the call', async () => {
    expect(await call()).toMatchObject({ ok: true, output: 'looked up' })
    expect(await call(10_000)).toMatchObject({ ok: true, output: 'looked up' })
  })
})

/** The MCP server's `slow` tool (1.5 s), called through the engine's handler and pool. */
function callMcp(windowMs?: number, url = mcp.url) {
  // The pool keeps its sessions in the engine state's `mcp` part, which is all it reads.
  const state = { mcp: { epoch: 0, servers: {} } } as unknown as EngineState
  const endpoint = { name: 'docs', url, headers: {}, timeoutMs: 30_000 }
  const pool = new McpPool(
    createSdkMcpClient(),
    [{ name: 'docs', endpoint, allows: () => true }],
    state,
  )
  const tool = {
    name: 'slow',
    model_name: 'mcp__docs__slow',
    description: 'slow',
    input_schema: { type: 'object' },
    read_only: true,
  }
  const ctx: ToolRunContext = {
    tenant: 't',
    sessionId: 's',
    toolCallId: 'c',
    itemId: 'item_1',
    rawArguments: '{}',
    now: () => Date.now(),
    nextItemId: () => 'item_2',
    remainingMs: () => 60_000,
    ...(windowMs === undefined ? {} : { windowMs: () => windowMs }),
  }
  return mcpToolHandler(pool, 'docs', tool, 64 * 1024).run({}, ctx)
}

describe('an MCP tool call and the platform timeout', () => {
  it("is stopped at the end of its window: the tool's error, saying it is not run again", async () => {
    const result = await callMcp(300)
    expect(result).toMatchObject({ kind: 'done', ok: false })
    expect(result.kind === 'done' && result.output).toContain(
      stoppedCallOutput('mcp__docs__slow', 300),
    )
  })

  it('runs to its answer without a window', async () => {
    expect(await callMcp()).toMatchObject({ kind: 'done', ok: true, output: 'slow answer' })
  })

  it('is stopped at the end of its window while the server does not answer its connect', async () => {
    // The connect (initialize) waited for the server's own 30 s timeout before.
    const result = await callMcp(300, silentUrl)
    expect(result).toMatchObject({ kind: 'done', ok: false })
    expect(result.kind === 'done' && result.output).toContain(
      stoppedCallOutput('mcp__docs__slow', 300),
    )
  })
})

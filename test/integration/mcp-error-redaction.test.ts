import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyedEntryEnv, useEntryWithMock } from '../support/entry-with-mock.ts'
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts'

/**
 * The deployment's MCP server is called with the operator's credentials, and a server's error may
 * echo them: a tool's error naming the Authorization header it was sent, an error page quoting
 * the request. The real Node entry, with a real MCP server (the SDK's) in TURNLINE_MCP_SERVERS,
 * must keep them out of what the tenant reads — the turn's answer, the tool's output and the
 * stored events — and tell the operator the server's words, redacted, in its log.
 */
const KEY = 'mcp-redaction-key-0123456789abcdef'
const OPERATOR_TOKEN = 'ops-SECRET-token-0123456789'
/** What none of the tenant's answers, nor the operator's log, may hold. */
const SECRETS = ['ops-SECRET', 'token-0123456789']

let mcp: TestMcpServer
beforeAll(async () => {
  mcp = await startMcpServer({ echoAuth: true })
})
afterAll(async () => {
  await mcp?.close()
})
const fx = useEntryWithMock('mcp-redaction', () =>
  keyedEntryEnv('mcp-redaction', KEY, {
    TURNLINE_MCP_SERVERS: JSON.stringify([
      { name: 'ops', url: mcp.url, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
    ]),
  }),
)
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }

const post = (path: string, body: unknown) =>
  fetch(`${fx.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })

function expectNoSecret(text: string) {
  for (const secret of SECRETS) expect(text).not.toContain(secret)
}

/** One turn whose model calls `tool` of the server `ops`, then answers; the turn's answer text. */
async function turnCalling(session: string, tool: string, id: string): Promise<string> {
  fx.mock.enqueue(
    { toolCalls: [{ id, name: `mcp__ops__${tool}`, arguments: '{"q":"x"}' }] },
    { text: 'Done.' },
  )
  const turn = await post(`/v1/sessions/${session}/turns`, { input: `call ${tool}` })
  expect(turn.status).toBe(200)
  return turn.text()
}

/** What the model read of the call (the second request's tool message). */
function toolMessage(): string {
  const body = fx.mock.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] }
  return JSON.stringify(body.messages.filter((m) => m.role === 'tool'))
}

/** The operator log's 'mcp request failed' lines. */
function loggedFaults(): Record<string, unknown>[] {
  return fx.server
    .output()
    .split('\n')
    .filter((line) => line.includes('"msg":"mcp request failed"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe("the deployment's MCP server's errors", () => {
  it('reach the tenant and the model with the credentials they echo redacted; the operator reads the words', async () => {
    const created = await post('/v1/sessions', {
      permissions: { mode: 'default', allow: ['mcp__ops__*'] },
    })
    const { session_id: id } = (await created.json()) as { session_id: string }

    // A tool's error (isError) that names the header it was sent.
    const failed = await turnCalling(id, 'broken', 'c1')
    expect(failed).toContain('the backend is down (sent Authorization: [redacted]')
    expectNoSecret(failed)
    expectNoSecret(toolMessage())

    // The server refuses the operator's credentials: its answer, which quotes them, is not told.
    mcp.refuse(401)
    const refused = await turnCalling(id, 'search', 'c2')
    expect(refused).toContain(
      "MCP server ops: tool search failed: HTTP 401: the server refused the deployment's credentials",
    )
    expectNoSecret(refused)
    expectNoSecret(toolMessage())

    // Any other error answer is told with the credentials it quotes redacted.
    mcp.refuse(500)
    const broken = await turnCalling(id, 'search', 'c3')
    expect(broken).toContain('MCP server ops: tool search failed: Streamable HTTP error')
    expect(broken).toContain('[redacted]')
    expectNoSecret(broken)
    mcp.refuse(undefined)

    const events = await (await fetch(`${fx.url}/v1/sessions/${id}/events`, { headers })).text()
    expect(events).toContain('mcp_tool_call')
    expectNoSecret(events)

    // The operator reads each failed request's words, redacted, once.
    const logged = loggedFaults()
    expect(logged.map((line) => line.status)).toEqual([401, 500])
    expect(logged[0]).toMatchObject({
      level: 'warn',
      tenant: 'tenant-a',
      session: id,
      server: 'ops',
      server_message: expect.stringContaining('Error POSTing to endpoint'),
    })
    expectNoSecret(JSON.stringify(logged))
  })
})

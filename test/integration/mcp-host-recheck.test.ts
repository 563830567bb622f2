import { describe, expect, it } from 'vitest'
import { useMcpEngine } from '../support/mcp-engine.ts'
import type { MockRequest } from '../support/mock-openai.ts'

/**
 * A session's MCP server is its tenant's choice of URL, as an HTTP tool's is: its host is checked
 * against TURNLINE_TOOL_ALLOWED_HOSTS at every connection, not only when the session was made
 * (an HTTP tool's at every call). A real MCP server (the SDK's), the mock OpenAI server.
 */
const setup = useMcpEngine()
const { fixture } = setup

const docs = () => ({ name: 'docs', url: setup.mcp.url })
const offered = (request: MockRequest | undefined) =>
  ((request?.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name)
const call = (name: string, args: unknown, id = 'c1') => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
})

describe('MCP server hosts checked at every connection', () => {
  it("a session's server whose host is no longer allowed is not called, and is again once it is", async () => {
    const { session_id } = await fixture.engine.service.createSession('local', {
      mcp_servers: [docs()],
      harness: { artifact_tools: false },
    })
    const tools = fixture.engine.deps.tools as { allowedHosts: readonly string[] }
    const allowed = tools.allowedHosts
    fixture.engine.mock.enqueue({ text: 'first' })
    await fixture.engine.service.stepTurn('local', session_id, { input: 'hi' })
    const first = fixture.engine.mock.requests.length - 1
    expect(offered(fixture.engine.mock.requests[first])).toContain('mcp__docs__search')
    tools.allowedHosts = ['tools.example.com']
    setup.mcp.requests.length = 0
    try {
      // The model still calls the tool it was offered before: refused without a request.
      fixture.engine.mock.enqueue(call('mcp__docs__search', { q: 'x' }), { text: 'second' })
      const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'again' })
      expect(turn.warnings?.join('\n')).toMatch(
        /MCP server docs: host 127\.0\.0\.1:\d+ is not allowed \(TURNLINE_TOOL_ALLOWED_HOSTS\): its tools are not offered/,
      )
      expect(offered(fixture.engine.mock.requests[first + 1])).not.toContain('mcp__docs__search')
      expect(setup.mcp.requests).toEqual([])
    } finally {
      tools.allowedHosts = allowed
    }
    fixture.engine.mock.enqueue({ text: 'third' })
    await fixture.engine.service.stepTurn('local', session_id, { input: 'once more' })
    expect(offered(fixture.engine.mock.requests.at(-1))).toContain('mcp__docs__search')
  })
})

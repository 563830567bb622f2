import { describe, expect, it } from 'vitest'
import { parseEngineState } from '../../src/contract/engine-state.ts'
import { mcpToolName } from '../../src/core/mcp/mcp-tool-name.ts'
import { echoTool } from '../support/engine-harness.ts'
import { useMcpEngine } from '../support/mcp-engine.ts'
import { startMcpServer } from '../support/mcp-server.ts'
import type { MockRequest } from '../support/mock-openai.ts'

/**
 * MCP tool discovery through the real engine: a real MCP server (the SDK's, over Streamable
 * HTTP) started for this file (useMcpEngine), the SDK client behind the McpClient port, the mock
 * OpenAI server.
 */
const setup = useMcpEngine()
const { fixture } = setup

const docs = () => ({
  name: 'docs',
  url: setup.mcp.url,
  headers: { authorization: 'Bearer s3cret' },
})
const offered = (request: MockRequest | undefined) =>
  ((request?.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name)
const call = (name: string, args: unknown, id = 'c1') => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
})

async function stateOf(sessionId: string) {
  const ref = { tenant: 'local', workspace: 'default', sessionId }
  return parseEngineState((await fixture.engine.deps.sessions.open(ref)).state)
}

describe('MCP tools in a session', () => {
  it('offers mcp__<server>__<tool> in catalog order and records a call as mcp_tool_call', async () => {
    fixture.engine.mock.enqueue(call('mcp__docs__search', { q: 'serde' }), { text: 'Two hits.' })
    const { session_id } = await fixture.engine.service.createSession('local', {
      tools: [echoTool(fixture.engine.receiver.url)],
      mcp_servers: [docs()],
      harness: { artifact_tools: false },
    })
    const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'Find serde' })
    expect(turn.status).toBe('completed')
    expect(offered(fixture.engine.mock.requests[0])).toEqual([
      'lookup',
      'mcp__docs__broken',
      'mcp__docs__search',
      'mcp__docs__unlock',
      'read_tool_output',
    ])
    const search = (
      (fixture.engine.mock.requests[0]?.body.tools ?? []) as { function: unknown }[]
    )[2]
    expect(search).toMatchObject({
      function: {
        description: 'Search the docs',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
      },
    })
    const items = turn.events.flatMap((e) =>
      'item' in e && e.type !== 'item.updated' ? [`${e.type}:${e.item.id}:${e.item.type}`] : [],
    )
    expect(items).toEqual([
      'item.started:item_0:tool_invocation',
      'item.started:item_0:mcp:mcp_tool_call',
      'item.completed:item_0:mcp:mcp_tool_call',
      'item.completed:item_0:tool_invocation',
      'item.started:item_0:output:tool_output',
      'item.completed:item_0:output:tool_output',
      'item.started:item_1:agent_message',
      'item.completed:item_1:agent_message',
    ])
    const mcpItem = turn.events.find(
      (e) => e.type === 'item.completed' && e.item.type === 'mcp_tool_call',
    )
    expect(mcpItem).toEqual({
      type: 'item.completed',
      item: {
        id: 'item_0:mcp',
        type: 'mcp_tool_call',
        tool_name: 'mcp__docs__search',
        arguments: { q: 'serde' },
        result: 'results for serde: two hits',
        status: 'completed',
      },
    })
    const tool = fixture.engine.mock.requests[1]?.body.messages as {
      role: string
      content: string
    }[]
    expect(tool.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'results for serde: two hits',
    })
    expect(setup.mcp.requests.every((r) => r.auth === 'Bearer s3cret')).toBe(true)
    // The API does not echo the credentials back.
    const view = await fixture.engine.service.getSession('local', session_id)
    expect(view.config.mcp_servers?.[0]?.headers).toEqual({ authorization: '[redacted]' })
    expect((await stateOf(session_id)).mcp).toMatchObject({ epoch: 1, catalog: expect.any(String) })
  })

  it('a tool error fails the call; permission patterns apply to mcp__ names', async () => {
    fixture.engine.mock.enqueue(call('mcp__docs__broken', {}), { text: 'It failed.' })
    const { session_id } = await fixture.engine.service.createSession('local', {
      mcp_servers: [docs()],
      permissions: { mode: 'default', allow: ['mcp__docs__b*'] },
    })
    const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'try' })
    const output = turn.events.find(
      (e) => e.type === 'item.completed' && e.item.type === 'tool_output',
    )
    expect(output).toMatchObject({ item: { output: 'the backend is down', status: 'failed' } })
    expect(turn.events).toContainEqual(
      expect.objectContaining({
        type: 'item.completed',
        item: expect.objectContaining({ type: 'mcp_tool_call', status: 'failed' }),
      }),
    )
    // Not allowed, mode default: asks.
    fixture.engine.mock.enqueue(call('mcp__docs__unlock', {}, 'c2'))
    const asked = await fixture.engine.service.stepTurn('local', session_id, { input: 'unlock' })
    expect(asked.status).toBe('awaiting_approval')
    expect(asked.events).toContainEqual({
      type: 'permission.requested',
      tool_name: 'mcp__docs__unlock',
    })
  })

  it('tools/list_changed: the next turn reads the catalog again, in a new epoch and segment', async () => {
    fixture.engine.mock.enqueue(call('mcp__docs__unlock', {}), { text: 'Unlocked.' })
    const { session_id } = await fixture.engine.service.createSession('local', {
      mcp_servers: [docs()],
    })
    await fixture.engine.service.stepTurn('local', session_id, { input: 'unlock it' })
    // The turn that heard the change keeps its tool set.
    expect(offered(fixture.engine.mock.requests[1])).not.toContain('mcp__docs__secret')
    const before = await stateOf(session_id)
    expect(before.mcp?.servers.docs?.stale).toBe(true)

    fixture.engine.mock.enqueue(call('mcp__docs__secret', {}, 'c3'), { text: 'Told.' })
    const next = await fixture.engine.service.stepTurn('local', session_id, {
      input: 'now the secret',
    })
    expect(offered(fixture.engine.mock.requests[2])).toContain('mcp__docs__secret')
    expect(next.events).toContainEqual(
      expect.objectContaining({
        item: expect.objectContaining({ type: 'tool_output', output: 'the secret' }),
      }),
    )
    const after = await stateOf(session_id)
    expect(after.mcp?.epoch).toBe((before.mcp?.epoch ?? 0) + 1)
    expect(after.mcp?.catalog).not.toBe(before.mcp?.catalog)
    expect(after.mcp?.servers.docs?.stale).toBe(false)
    expect(after.compaction?.segment?.sequence).toBe(
      (before.compaction?.segment?.sequence ?? 0) + 1,
    )
    expect(after.compaction?.segment?.catalog_hash).not.toBe(
      before.compaction?.segment?.catalog_hash,
    )
    // The same MCP session served every turn.
    expect(
      new Set(setup.mcp.requests.filter((r) => r.session).map((r) => r.session)).size,
    ).toBeGreaterThan(0)
  })

  it('resumes the MCP session across turns and starts a new one when the server forgot it', async () => {
    fixture.engine.mock.enqueue({ text: 'hi' })
    const { session_id } = await fixture.engine.service.createSession('local', {
      mcp_servers: [docs()],
    })
    await fixture.engine.service.stepTurn('local', session_id, { input: 'hello' })
    const first = (await stateOf(session_id)).mcp?.servers.docs?.session_id
    expect(first).toBeDefined()
    setup.mcp.requests.length = 0
    fixture.engine.mock.enqueue(call('mcp__docs__search', { q: 'a' }), { text: 'ok' })
    await fixture.engine.service.stepTurn('local', session_id, { input: 'search' })
    expect(setup.mcp.requests.some((r) => r.rpc === 'initialize')).toBe(false)
    expect((await stateOf(session_id)).mcp?.servers.docs?.session_id).toBe(first)

    setup.mcp.forget()
    fixture.engine.mock.enqueue(call('mcp__docs__search', { q: 'b' }), { text: 'ok' })
    const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'again' })
    expect(turn.events).toContainEqual(
      expect.objectContaining({
        item: expect.objectContaining({ type: 'tool_output', status: 'completed' }),
      }),
    )
    const renewed = await stateOf(session_id)
    expect(renewed.mcp?.servers.docs?.session_id).not.toBe(first)
    expect(renewed.mcp?.servers.docs?.stale).toBe(true)
  })

  it('allowed_tools filters the catalog; an unreachable server is a warning, not a failure', async () => {
    fixture.engine.mock.enqueue({ text: 'ok' })
    const { session_id } = await fixture.engine.service.createSession('local', {
      mcp_servers: [
        { ...docs(), allowed_tools: ['search'] },
        { name: 'gone', url: 'http://127.0.0.1:9/mcp' },
      ],
      harness: { artifact_tools: false },
    })
    const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'hi' })
    expect(turn.status).toBe('completed')
    expect(offered(fixture.engine.mock.requests[0])).toEqual([
      'mcp__docs__search',
      'read_tool_output',
    ])
    expect(turn.warnings?.join('\n')).toMatch(/MCP server gone: could not connect/)
    expect((await stateOf(session_id)).mcp?.servers.gone).toMatchObject({ stale: true })
  })

  it('keeps a result over the inline limit whole as an artifact; the model gets a preview', async () => {
    const big = Array.from({ length: 40_000 }, (_, i) => `row ${i} ${'y'.repeat(40)}`).join('\n')
    setup.mcp.addTool('dump', big)
    fixture.engine.mock.enqueue(call('mcp__docs__dump', {}), { text: 'dumped' })
    const { session_id } = await fixture.engine.service.createSession('local', {
      mcp_servers: [{ ...docs(), allowed_tools: ['dump'] }],
      harness: { artifact_tools: false },
    })
    const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'dump' })
    expect(turn.status).toBe('completed')
    expect(offered(fixture.engine.mock.requests[0])).toEqual([
      'mcp__docs__dump',
      'read_tool_output',
    ])
    const sent = fixture.engine.mock.requests[1]?.body.messages as {
      role: string
      content: string
    }[]
    const preview = sent.at(-1)?.content ?? ''
    expect(preview.length).toBeLessThan(24 * 1024)
    const id = /kept whole as artifact (out_[0-9a-f]{32})/.exec(preview)?.[1] ?? ''
    expect(preview.startsWith(big.slice(0, 1000))).toBe(true)
    const opened = await fixture.engine.service.getOutputArtifact('local', session_id, id)
    const parts: Uint8Array[] = []
    for await (const part of opened.read(0, opened.artifact.size)) parts.push(part)
    expect(Buffer.concat(parts).toString('utf8')).toBe(big)
    const listed = await fixture.engine.service.listKeptOutputs('local', session_id, { limit: 5 })
    expect(listed.outputs).toMatchObject([
      { tool_name: 'mcp__docs__dump', artifact_id: id, size: Buffer.byteLength(big) },
    ])
  })

  it("a permission rule in the server's own tool name holds for the name the model calls", async () => {
    // The model calls `mcp__ops__drop_table` (`.` made `_`) and `mcp__ops__delete_…_<hash>` (cut
    // to 64 characters); rules written with the server's names must still deny them.
    const ops = await startMcpServer()
    try {
      const long = 'delete_repository_with_all_of_its_issues_and_pull_requests'
      ops.addTool('drop.table', 'dropped')
      ops.addTool(long, 'deleted')
      const server = { name: 'ops', url: ops.url }
      const { session_id } = await fixture.engine.service.createSession('local', {
        mcp_servers: [server],
        permissions: { mode: 'auto', deny: ['mcp__ops__drop.table', `mcp__ops__${long}`] },
        harness: { artifact_tools: false },
      })
      const cut = await mcpToolName('ops', long)
      expect(cut).toMatch(/^mcp__ops__delete_repository_with_all_of_its_issues_and__[0-9a-f]{8}$/)
      fixture.engine.mock.enqueue(
        {
          toolCalls: [
            { id: 'c1', name: 'mcp__ops__drop_table', arguments: '{}' },
            { id: 'c2', name: cut, arguments: '{}' },
          ],
        },
        { text: 'Refused.' },
      )
      const turn = await fixture.engine.service.stepTurn('local', session_id, { input: 'drop' })
      expect(offered(fixture.engine.mock.requests.at(-2))).toEqual(
        expect.arrayContaining(['mcp__ops__drop_table', cut]),
      )
      expect(turn.status).toBe('completed')
      const outcomes = turn.events.flatMap((e) =>
        e.type === 'item.completed' && e.item.type === 'tool_invocation'
          ? [[e.item.tool_name, (e.item as { outcome?: string }).outcome]]
          : [],
      )
      expect(outcomes).toEqual([
        ['mcp__ops__drop_table', 'permission_rejected'],
        [cut, 'permission_rejected'],
      ])
      expect(ops.requests.filter((r) => r.rpc === 'tools/call')).toEqual([])
    } finally {
      await ops.close()
    }
  })

  it('refuses bad MCP settings at creation (400)', async () => {
    const bad: unknown[] = [
      { mcp_servers: [{ name: 'a__b', url: setup.mcp.url }] },
      { mcp_servers: [docs(), docs()] },
      { mcp_servers: [{ name: 'x', url: 'http://example.com/mcp' }] },
      { mcp_servers: [{ name: 'x', url: setup.mcp.url, headers: { 'mcp-session-id': 'forged' } }] },
      {
        mcp_servers: [docs()],
        tools: [{ ...echoTool(fixture.engine.receiver.url), name: 'mcp__docs__x' }],
      },
    ]
    for (const body of bad) {
      await expect(
        fixture.engine.service.createSession('local', body as never),
        JSON.stringify(body),
      ).rejects.toMatchObject({ code: 'invalid_input' })
    }
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { PendingCall } from '../../src/contract/engine-state.ts'
import { HooksSchema } from '../../src/contract/hook-config.ts'
import { PermissionsSchema } from '../../src/contract/permissions-config.ts'
import { ThreadEventSchema } from '../../src/contract/thread-event.ts'
import type { PermissionPolicy } from '../../src/core/permissions/permission-policy.ts'
import { gateToolCall, type ToolGateInput } from '../../src/core/permissions/tool-gate.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'

const SECRET = 'gate-secret'
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
beforeAll(async () => {
  receiver = await startHookReceiver(SECRET)
})
afterAll(async () => {
  await receiver.close()
})
beforeEach(() => {
  receiver.received.length = 0
  receiver.setReply(() => ({ body: '{}' }))
})

const call: PendingCall = {
  item_id: 'item_5',
  tool_call_id: 'call_5',
  tool_name: 'deploy',
  arguments: '{"env":"prod"}',
}

function input(
  policy: Partial<PermissionPolicy>,
  extra: Partial<ToolGateInput> = {},
): ToolGateInput {
  let n = 6
  return {
    policy: PermissionsSchema.parse(policy),
    call,
    traits: { readOnly: false },
    hooks: HooksSchema.parse([
      { event: 'pre_tool_use', type: 'http', url: receiver.url('/gate'), blocking: true },
    ]),
    hookDeps: {
      tenant: 't1',
      http: { fetch, allowedHosts: [receiver.host], secretFor: () => SECRET },
    },
    hookContext: { sessionId: 'sess-1', cwd: '/w' },
    now: 1_000,
    nextItemId: () => `item_${n++}`,
    ...extra,
  }
}

describe('tool gate: policy, then pre_tool_use hooks', () => {
  it('runs an allowed call after the hooks passed', async () => {
    const gate = await gateToolCall(input({ allow: ['deploy'] }))
    expect(gate).toMatchObject({ kind: 'run', warnings: [] })
    expect(receiver.received).toHaveLength(1)
    expect(receiver.received[0]?.body).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'deploy',
      tool_input: { env: 'prod' },
      tool_call_id: 'call_5',
    })
  })

  it('rejects a denied call without calling any hook', async () => {
    const gate = await gateToolCall(input({ allow: ['*'], deny: ['deploy'] }))
    expect(receiver.received).toHaveLength(0)
    if (gate.kind !== 'reject') throw new Error(`expected reject, got ${gate.kind}`)
    expect(gate.outcome).toBe('permission_rejected')
    for (const event of gate.events) ThreadEventSchema.parse(event)
    expect(gate.events.at(-1)).toMatchObject({ item: { id: 'item_6', type: 'error' } })
    expect(gate.toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'call_5' })
    expect(gate.toolMessage.content).toContain('"deploy"')
  })

  it('asks a human in default mode, then runs the hooks once approved', async () => {
    const asked = await gateToolCall(input({ mode: 'default' }))
    expect(asked).toEqual({
      kind: 'ask',
      event: { type: 'permission.requested', tool_name: 'deploy' },
      pending: {
        tool_name: 'deploy',
        item_id: 'item_5',
        tool_call_id: 'call_5',
        requested_at: 1_000,
      },
    })
    expect(receiver.received).toHaveLength(0)
    const approved = await gateToolCall(input({}, { approved: true }))
    expect(approved.kind).toBe('run')
    expect(receiver.received).toHaveLength(1)
  })

  it('turns a blocking hook deny into hook_denied', async () => {
    receiver.setReply(() => ({ body: '{"decision":"deny","reason":"change freeze"}' }))
    const gate = await gateToolCall(input({ mode: 'auto' }))
    if (gate.kind !== 'reject') throw new Error(`expected reject, got ${gate.kind}`)
    expect(gate.outcome).toBe('hook_denied')
    expect(gate.events[0]).toMatchObject({
      type: 'item.completed',
      item: { id: 'item_5', status: 'failed', outcome: 'hook_denied' },
    })
    expect(gate.toolMessage.content).toContain('change freeze')
    expect(gate.hookResults).toMatchObject([{ decision: 'deny', honoured: true }])
  })

  it("matches a hook's matcher against the MCP tool's own name too", async () => {
    // The server calls it `repo/delete`; the model calls `mcp__ops__repo_delete`.
    receiver.setReply(() => ({ body: '{"decision":"deny","reason":"not the repo"}' }))
    const mcpCall = { ...call, tool_name: 'mcp__ops__repo_delete' }
    const matched = (matcher: string) =>
      HooksSchema.parse([
        { event: 'pre_tool_use', type: 'http', url: receiver.url('/g'), blocking: true, matcher },
      ])
    const traits = { readOnly: false, aliases: ['mcp__ops__repo/delete'] }
    for (const matcher of ['mcp__ops__repo/delete', 'mcp__ops__repo_delete']) {
      const gate = await gateToolCall(
        input({ mode: 'auto' }, { call: mcpCall, traits, hooks: matched(matcher) }),
      )
      expect(gate.kind === 'reject' && gate.outcome, matcher).toBe('hook_denied')
    }
    // Once per call, whichever of its names matched.
    expect(receiver.received).toHaveLength(2)
    const other = { call: mcpCall, traits, hooks: matched('mcp__ops__repo/create') }
    expect((await gateToolCall(input({ mode: 'auto' }, other))).kind).toBe('run')
  })

  it('lets only read-only tools through in plan mode', async () => {
    expect((await gateToolCall(input({ mode: 'plan', allow: ['*'] }))).kind).toBe('reject')
    const readOnly = { traits: { readOnly: true } }
    expect((await gateToolCall(input({ mode: 'plan' }, readOnly))).kind).toBe('run')
  })
})

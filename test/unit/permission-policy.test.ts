import { describe, expect, it } from 'vitest'
import type { PendingCall } from '../../src/contract/engine-state.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { PermissionResolutionRequestSchema } from '../../src/contract/permission-resolution.ts'
import { PermissionsSchema } from '../../src/contract/permissions-config.ts'
import { ThreadEventSchema } from '../../src/contract/thread-event.ts'
import {
  decide,
  evaluatePermission,
  type PermissionPolicy,
} from '../../src/core/permissions/permission-policy.ts'
import {
  rejectedToolEvents,
  rejectionDetail,
  rejectionToolMessage,
} from '../../src/core/permissions/rejected-tool.ts'
import {
  requestPermission,
  resolvePermission,
} from '../../src/core/permissions/resolve-permission.ts'
import { compileToolPattern } from '../../src/core/permissions/tool-pattern.ts'

const policy = (input: Partial<PermissionPolicy>): PermissionPolicy =>
  PermissionsSchema.parse(input)
const readOnly = { readOnly: true }
const mutating = { readOnly: false }

describe('tool patterns', () => {
  it('matches exact names only, case-sensitively', () => {
    const exact = compileToolPattern('lookup')
    expect(exact('lookup')).toBe(true)
    expect(exact('lookup2')).toBe(false)
    expect(exact('Lookup')).toBe(false)
    expect(exact('xlookup')).toBe(false)
  })

  it('treats * as any run of characters and everything else literally', () => {
    expect(compileToolPattern('*')('anything')).toBe(true)
    expect(compileToolPattern('git_*')('git_push')).toBe(true)
    expect(compileToolPattern('git_*')('git_')).toBe(true)
    expect(compileToolPattern('git_*')('gitpush')).toBe(false)
    expect(compileToolPattern('*_read')('file_read')).toBe(true)
    expect(compileToolPattern('*_read')('file_reader')).toBe(false)
    expect(compileToolPattern('fs_*_file')('fs_read_file')).toBe(true)
    expect(compileToolPattern('fs_*_file')('fs_read_files')).toBe(false)
    // regex metacharacters are literal
    expect(compileToolPattern('a.b*')('a.bc')).toBe(true)
    expect(compileToolPattern('a.b*')('axbc')).toBe(false)
    expect(compileToolPattern('x(1)?')('x(1)?')).toBe(true)
    expect(compileToolPattern('x(1)?')('x1')).toBe(false)
  })

  it('reads mcp__<server> as every tool of that server, and mcp__server__* as a glob', () => {
    const server = compileToolPattern('mcp__github')
    expect(server('mcp__github')).toBe(true)
    expect(server('mcp__github__create_issue')).toBe(true)
    expect(server('mcp__github__')).toBe(false)
    expect(server('mcp__githubx__create_issue')).toBe(false)
    expect(server('mcp__gitlab__create_issue')).toBe(false)
    const glob = compileToolPattern('mcp__github__*')
    expect(glob('mcp__github__create_issue')).toBe(true)
    expect(glob('mcp__github')).toBe(false)
    const oneTool = compileToolPattern('mcp__github__create_issue')
    expect(oneTool('mcp__github__create_issue')).toBe(true)
    expect(oneTool('mcp__github__create_issue_comment')).toBe(false)
  })
})

describe('decide', () => {
  it('allows what the allow list names and asks for the rest in default mode', () => {
    const p = policy({ allow: ['lookup', 'git_*'], mode: 'default' })
    expect(decide(p, 'lookup', mutating)).toBe('allow')
    expect(decide(p, 'git_status', mutating)).toBe('allow')
    expect(decide(p, 'send_email', mutating)).toBe('ask')
    expect(decide(p, 'send_email', readOnly)).toBe('ask')
  })

  it('lets deny win over allow, whatever the order or specificity', () => {
    const p = policy({ allow: ['*', 'send_email'], deny: ['send_*'] })
    expect(decide(p, 'send_email', mutating)).toBe('deny')
    expect(decide(p, 'lookup', mutating)).toBe('allow')
    const evaluation = evaluatePermission(p, 'send_email', mutating)
    expect(evaluation).toMatchObject({ source: 'deny_rule', rule: 'send_*' })
    expect(evaluation.reason).toContain('send_*')
    expect(decide(policy({ allow: ['*'], deny: ['*'], mode: 'auto' }), 'x', readOnly)).toBe('deny')
  })

  it('allows everything not denied in auto mode', () => {
    const p = policy({ deny: ['mcp__prod'], mode: 'auto' })
    expect(decide(p, 'anything', mutating)).toBe('allow')
    expect(decide(p, 'mcp__prod__drop_table', mutating)).toBe('deny')
    expect(decide(p, 'mcp__staging__drop_table', mutating)).toBe('allow')
  })

  it("applies a rule naming a tool's alias (an MCP tool by the server's own name)", () => {
    const alias = { readOnly: false, aliases: ['mcp__db__drop.table'] }
    const p = policy({ allow: ['mcp__db__read.*'], deny: ['mcp__db__drop.table'], mode: 'auto' })
    expect(evaluatePermission(p, 'mcp__db__drop_table', alias)).toMatchObject({
      decision: 'deny',
      rule: 'mcp__db__drop.table',
    })
    expect(decide(p, 'mcp__db__drop_table', mutating)).toBe('allow')
    const asks = policy({ allow: ['mcp__db__read.rows'], mode: 'default' })
    const read = { readOnly: false, aliases: ['mcp__db__read.rows'] }
    expect(decide(asks, 'mcp__db__read_rows', read)).toBe('allow')
    expect(decide(asks, 'mcp__db__read_rows', mutating)).toBe('ask')
  })

  it('allows only read-only tools in plan mode, even when allow-listed', () => {
    const p = policy({ allow: ['*'], deny: ['secret_read'], mode: 'plan' })
    expect(decide(p, 'search', readOnly)).toBe('allow')
    expect(decide(p, 'write_file', mutating)).toBe('deny')
    expect(decide(p, 'secret_read', readOnly)).toBe('deny')
    expect(evaluatePermission(p, 'write_file', mutating).reason).toContain('read-only')
  })
})

const call: PendingCall = {
  item_id: 'item_3',
  tool_call_id: 'call_9',
  tool_name: 'send_email',
  arguments: '{"to":"a@example.com"}',
}

describe('rejected tool events', () => {
  for (const outcome of ['permission_rejected', 'permission_cancelled', 'hook_denied'] as const) {
    it(`maps ${outcome} to failed invocation, failed output with detail, then an error item`, () => {
      const detail = rejectionDetail(outcome, 'send_email', 'not today')
      const events = rejectedToolEvents({ call, outcome, detail, errorItemId: 'item_4' })
      for (const event of events) expect(ThreadEventSchema.parse(event)).toEqual(event)
      expect(events).toEqual([
        {
          type: 'item.completed',
          item: {
            id: 'item_3',
            type: 'tool_invocation',
            tool_name: 'send_email',
            arguments: { to: 'a@example.com' },
            tool_call_id: 'call_9',
            status: 'failed',
            outcome,
          },
        },
        {
          type: 'item.started',
          item: {
            id: 'item_3:output',
            type: 'tool_output',
            call_id: 'item_3',
            tool_call_id: 'call_9',
            output: '',
            status: 'in_progress',
          },
        },
        {
          type: 'item.completed',
          item: {
            id: 'item_3:output',
            type: 'tool_output',
            call_id: 'item_3',
            tool_call_id: 'call_9',
            output: detail,
            status: 'failed',
          },
        },
        { type: 'item.completed', item: { id: 'item_4', type: 'error', message: detail } },
      ])
      expect(detail).toContain('not today')
      expect(detail).toContain('not run')
    })
  }

  it('gives the model a tool message for the rejected call', () => {
    expect(rejectionToolMessage(call, 'no')).toEqual({
      role: 'tool',
      tool_call_id: 'call_9',
      content: 'no',
    })
  })
})

describe('permission resolution', () => {
  it('emits permission.requested and measures wait_ms from it', () => {
    const { pending, event } = requestPermission(call, 1_000)
    expect(event).toEqual({ type: 'permission.requested', tool_name: 'send_email' })
    const resolved = resolvePermission(
      pending,
      { tool_name: 'send_email', decision: 'allow' },
      3_500,
    )
    expect(resolved.event).toEqual({
      type: 'permission.resolved',
      tool_name: 'send_email',
      decision: 'allow',
      wait_ms: 2_500,
    })
    expect(resolved.aftermath).toEqual({ kind: 'run' })
    expect(resolved.resolution).toMatchObject({ item_id: 'item_3', resolved_at: 3_500 })
  })

  it('maps deny, cancelled and followup to rejection outcomes', () => {
    const { pending } = requestPermission(call, 10)
    const deny = resolvePermission(pending, { tool_name: 'send_email', decision: 'deny' }, 20)
    expect(deny.aftermath).toMatchObject({ kind: 'reject', outcome: 'permission_rejected' })
    const cancelled = resolvePermission(
      pending,
      { tool_name: 'send_email', decision: 'cancelled' },
      20,
    )
    expect(cancelled.aftermath).toMatchObject({ kind: 'reject', outcome: 'permission_cancelled' })
    const followup = resolvePermission(
      pending,
      { tool_name: 'send_email', decision: 'followup', message: 'Draft it first.' },
      5,
    )
    expect(followup.event.wait_ms).toBe(0)
    expect(followup.aftermath).toMatchObject({
      kind: 'reject',
      outcome: 'followup',
      followup: { role: 'user', content: 'Draft it first.' },
    })
    if (followup.aftermath.kind !== 'reject') throw new Error('expected a rejection')
    const events = rejectedToolEvents({
      call,
      outcome: followup.aftermath.outcome,
      detail: followup.aftermath.detail,
      errorItemId: 'item_4',
    })
    expect(events.map((e) => ('item' in e ? e.item.type : e.type))).toEqual([
      'tool_invocation',
      'tool_output',
      'tool_output',
    ])
  })

  it('refuses a resolution with nothing waiting or for another tool', () => {
    const body = { tool_name: 'send_email', decision: 'allow' } as const
    expect(() => resolvePermission(undefined, body, 0)).toThrow(/no tool call is waiting/)
    try {
      resolvePermission(undefined, body, 0)
    } catch (error) {
      expect(isTurnlineError(error, 'conflict')).toBe(true)
    }
    const { pending } = requestPermission(call, 0)
    expect(() => resolvePermission(pending, { ...body, tool_name: 'lookup' }, 0)).toThrow(
      /for tool send_email, not lookup/,
    )
  })

  it('validates the request body', () => {
    const parse = (body: unknown) => PermissionResolutionRequestSchema.safeParse(body).success
    expect(parse({ tool_name: 'x', decision: 'allow' })).toBe(true)
    expect(parse({ tool_name: 'x', decision: 'followup', message: 'hi' })).toBe(true)
    expect(parse({ tool_name: 'x', decision: 'allow', message: 'hi' })).toBe(false)
    expect(parse({ tool_name: 'x', decision: 'maybe' })).toBe(false)
    expect(parse({ tool_name: '', decision: 'deny' })).toBe(false)
    expect(parse({ tool_name: 'x', decision: 'deny', extra: 1 })).toBe(false)
  })
})

import { describe, expect, it, onTestFinished } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { echoTool, TOOL_SECRET } from '../support/engine-deps.ts'
import { gate } from '../support/gate.ts'
import { inProcessHookReceiver } from '../support/hook-receiver.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

/** HTTP hooks answered in-process, through the same fetch as the session's HTTP tools. */
const hooks = inProcessHookReceiver(TOOL_SECRET)
const fixture = useScriptedEngine({ hooks })

const items = (events: ThreadEvent[]) =>
  events.flatMap((e) => (e.type === 'item.completed' ? [e.item] : []))
const call = { id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }

describe('permissions', () => {
  it('asks, waits awaiting_approval, and continues the same tool loop once allowed', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    model.enqueue({ toolCalls: [call] })
    const asked = await service.stepTurn('t1', session_id, { input: 'look it up' })
    expect(asked.status).toBe('awaiting_approval')
    expect(asked.events.at(-1)).toEqual({ type: 'permission.requested', tool_name: 'lookup' })
    expect(receiver.calls).toHaveLength(0)
    await expect(service.stepTurn('t1', session_id, { input: 'other' })).rejects.toMatchObject({
      code: 'conflict',
    })
    await expect(
      service.resolvePermission('t1', session_id, { tool_name: 'nope', decision: 'allow' }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
    })

    const resolved = await service.resolvePermission('t1', session_id, {
      tool_name: 'lookup',
      decision: 'allow',
    })
    expect(resolved.status).toBe('waiting')
    expect(resolved.events).toEqual([
      {
        type: 'permission.resolved',
        tool_name: 'lookup',
        decision: 'allow',
        wait_ms: expect.any(Number),
      },
    ])
    model.enqueue({ text: 'found it' })
    const done = await service.stepTurn('t1', session_id, {})
    expect(done.status).toBe('completed')
    expect(done.turn_id).toBe(asked.turn_id)
    expect(items(done.events)[0]).toMatchObject({
      type: 'tool_invocation',
      status: 'completed',
      outcome: 'success',
    })
    expect(receiver.calls).toHaveLength(1)
    await expect(
      service.resolvePermission('t1', session_id, { tool_name: 'lookup', decision: 'allow' }),
    ).rejects.toMatchObject({
      code: 'conflict',
    })
    const page = await service.readEvents('t1', session_id, -1, 100)
    expect(page.events.filter((e) => e.line.event.type === 'turn.started')).toHaveLength(1)
  })

  it('a denied decision yields the permission_rejected items and the model is told', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    model.enqueue({ toolCalls: [call] })
    await service.stepTurn('t1', session_id, { input: 'go' })
    await service.resolvePermission('t1', session_id, { tool_name: 'lookup', decision: 'deny' })
    model.enqueue({ text: 'ok, not looking' })
    const done = await service.stepTurn('t1', session_id, {})
    const [invocation, output, error] = items(done.events)
    expect(invocation).toMatchObject({
      type: 'tool_invocation',
      status: 'failed',
      outcome: 'permission_rejected',
    })
    expect(output).toMatchObject({ type: 'tool_output', status: 'failed' })
    expect(error).toMatchObject({ type: 'error' })
    expect(receiver.calls).toHaveLength(0)
    const told = (
      (model.requests.at(-1)?.messages ?? []) as { role: string; content: string }[]
    ).at(-1)
    expect(told).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('Permission denied'),
    })
  })

  it('deny wins over allow, and plan mode runs read-only tools only', async () => {
    const { service, model, receiver } = fixture.engine
    const denied = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { allow: ['*'], deny: ['look*'], mode: 'auto' },
    })
    model.enqueue({ toolCalls: [call] }, { text: 'no' })
    const turn = await service.stepTurn('t1', denied.session_id, { input: 'go' })
    expect(items(turn.events)[0]).toMatchObject({ outcome: 'permission_rejected' })

    const readOnly = { ...echoTool(receiver.url), name: 'peek', read_only: true }
    const plan = await service.createSession('t1', {
      tools: [echoTool(receiver.url), readOnly],
      permissions: { mode: 'plan' },
    })
    model.enqueue(
      { toolCalls: [call, { id: 'c2', name: 'peek', arguments: '{"q":"y"}' }] },
      { text: 'planned' },
    )
    const planned = await service.stepTurn('t1', plan.session_id, { input: 'plan it' })
    const outcomes = items(planned.events).filter((i) => i.type === 'tool_invocation')
    expect(outcomes.map((i) => [i.tool_name, i.outcome])).toEqual([
      ['lookup', 'permission_rejected'],
      ['peek', 'success'],
    ])
    expect(receiver.calls.map((c) => c.body.tool)).toEqual(['peek'])
  })
})

describe('hooks', () => {
  it('a blocking pre_tool_use hook denies (hook_denied); a non-blocking deny is only recorded', async () => {
    const { service, model, receiver } = fixture.engine
    hooks.setReply(() => ({ body: JSON.stringify({ decision: 'deny', reason: 'not today' }) }))
    const blocking = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      hooks: [{ event: 'pre_tool_use', type: 'http', url: hooks.url('/pre'), blocking: true }],
    })
    model.enqueue({ toolCalls: [call] }, { text: 'blocked' })
    const turn = await service.stepTurn('t1', blocking.session_id, { input: 'go' })
    expect(items(turn.events)[0]).toMatchObject({ outcome: 'hook_denied', status: 'failed' })
    expect(receiver.calls).toHaveLength(0)
    expect(hooks.received[0]?.signatureValid).toBe(true)
    expect(hooks.received[0]?.body).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'lookup',
    })

    const advisory = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      hooks: [{ event: 'pre_tool_use', type: 'http', url: hooks.url('/pre') }],
    })
    model.enqueue({ toolCalls: [call] }, { text: 'ran anyway' })
    const ran = await service.stepTurn('t1', advisory.session_id, { input: 'go' })
    expect(items(ran.events)[0]).toMatchObject({ outcome: 'success' })
    expect(ran.warnings?.join(' ')).toMatch(/pre_tool_use/)
  })

  it('session_start, post_tool_use and stop fire; a slow or dead hook never loses the turn', async () => {
    const { service, model, receiver } = fixture.engine
    // /slow answers only after the test: its 200 ms timeout must end the wait.
    const late = gate()
    onTestFinished(late.open)
    hooks.setReply((h) =>
      h.path === '/slow' ? { body: '{}', hold: late.promise } : { body: '{}' },
    )
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      hooks: [
        { event: 'session_start', type: 'http', url: hooks.url('/start') },
        { event: 'post_tool_use', type: 'http', url: hooks.url('/post') },
        { event: 'stop', type: 'http', url: hooks.url('/slow'), timeout_ms: 200 },
        { event: 'stop', type: 'http', url: 'http://127.0.0.1:7/dead' },
      ],
    })
    model.enqueue({ toolCalls: [call] }, { text: 'done' })
    const turn = await service.stepTurn('t1', session_id, { input: 'go' })
    expect(turn.status).toBe('completed')
    const paths = hooks.received.map((h) => h.path)
    expect(paths).toEqual(expect.arrayContaining(['/start', '/post', '/slow']))
    expect(hooks.received.find((h) => h.path === '/start')?.body).toMatchObject({
      hook_event_name: 'SessionStart',
      source: 'startup',
    })
    expect(hooks.received.find((h) => h.path === '/post')?.body).toMatchObject({
      hook_event_name: 'PostToolUse',
    })
    expect(turn.warnings?.length).toBeGreaterThan(0)
  })

  it('session_start fires with source resume when an open turn continues, and compact after a compaction', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
      hooks: [{ event: 'session_start', type: 'http', url: hooks.url('/start') }],
    })
    model.enqueue({ toolCalls: [call] })
    await service.stepTurn('t1', session_id, { input: 'go' })
    await service.resolvePermission('t1', session_id, { tool_name: 'lookup', decision: 'allow' })
    model.enqueue({ text: 'done' }, { text: 'a summary of it all' })
    await service.stepTurn('t1', session_id, {})
    await service.compact('t1', session_id, {})
    const sources = hooks.received.filter((h) => h.path === '/start').map((h) => h.body.source)
    expect(sources).toEqual(['startup', 'resume', 'compact'])
  })
})

import { describe, expect, it } from 'vitest'
import { CANCEL_POLL_MS } from '../../src/core/turn/heartbeat.ts'
import { echoTool } from '../support/engine-deps.ts'
import { gate } from '../support/gate.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'
import { testClock } from '../support/test-clock.ts'

const clock = testClock()
const fixture = useScriptedEngine({ clock })

describe('cancel', () => {
  it('stops a running turn honestly: partial text is not success, the session ends cancelled', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', { tools: [echoTool(receiver.url)] })
    // The answer streams its first part, then waits until the cancel was asked for.
    const rest = gate()
    model.enqueue({
      text: 'a long answer that streams slowly '.repeat(10),
      chunkSize: 8,
      hold: rest.promise,
    })
    const running = service.stepTurn('t1', session_id, { input: 'go' })
    await model.requested(1)
    const asked = await service.cancel('t1', session_id)
    expect(asked).toMatchObject({ status: 'waiting', events: [] })
    await clock.advance(CANCEL_POLL_MS)
    rest.open()

    const turn = await running
    expect(turn.status).toBe('terminal')
    const types = turn.events.map((e) => e.type)
    expect(types).not.toContain('turn.completed')
    expect(types.slice(-2)).toEqual(['turn.failed', 'thread.completed'])
    expect(turn.events.at(-1)).toMatchObject({ subtype: 'cancelled', outcome_code: 'cancelled' })
    expect(turn.events.at(-1)).not.toHaveProperty('result')
    await expect(service.stepTurn('t1', session_id, { input: 'more' })).rejects.toMatchObject({
      code: 'session_completed',
    })
  })

  it('cancelling an open turn fails its unanswered tool calls', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] })
    expect((await service.stepTurn('t1', session_id, { input: 'go' })).status).toBe(
      'awaiting_approval',
    )
    const end = await service.cancel('t1', session_id)
    expect(end.status).toBe('terminal')
    expect(end.events.map((e) => e.type)).toEqual([
      'item.completed',
      'item.started',
      'item.completed',
      'turn.failed',
      'thread.completed',
    ])
    expect(end.events[0]).toMatchObject({
      item: { type: 'tool_invocation', status: 'failed', outcome: 'cancelled' },
    })
  })

  it('completes an item still streaming when the cancel arrives, as failed', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', { tools: [echoTool(receiver.url)] })
    const rest = gate()
    model.enqueue({
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: JSON.stringify({ q: 'x'.repeat(400) }) }],
      chunkSize: 8,
      hold: rest.promise,
    })
    const running = service.stepTurn('t1', session_id, { input: 'go' })
    await model.requested(1)
    await service.cancel('t1', session_id)
    await clock.advance(CANCEL_POLL_MS)
    rest.open()
    const turn = await running
    const started = turn.events.flatMap((e) => (e.type === 'item.started' ? [e.item.id] : []))
    const completed = turn.events.flatMap((e) => (e.type === 'item.completed' ? [e.item] : []))
    expect(started.length).toBeGreaterThan(0)
    for (const id of started) expect(completed.map((item) => item.id)).toContain(id)
    expect(completed).toContainEqual(
      expect.objectContaining({ type: 'tool_invocation', tool_name: 'lookup', status: 'failed' }),
    )
    expect(turn.events.map((e) => e.type).slice(-2)).toEqual(['turn.failed', 'thread.completed'])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { echoTool, startEngine } from '../support/engine-harness.ts'

let engine: Awaited<ReturnType<typeof startEngine>>
beforeAll(async () => {
  engine = await startEngine()
})
afterAll(async () => {
  await engine.close()
})

describe('cancel', () => {
  it('stops a running turn honestly: partial text is not success, the session ends cancelled', async () => {
    const { service, mock, receiver } = engine
    const { session_id } = await service.createSession('t1', { tools: [echoTool(receiver.url)] })
    mock.enqueue({
      text: 'a long answer that streams slowly '.repeat(10),
      chunkSize: 8,
      frameDelayMs: 60,
    })
    const running = service.stepTurn('t1', session_id, { input: 'go' })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const asked = await service.cancel('t1', session_id)
    expect(asked).toMatchObject({ status: 'waiting', events: [] })

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
    const { service, mock, receiver } = engine
    mock.reset()
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    mock.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] })
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
    const { service, mock, receiver } = engine
    mock.reset()
    const { session_id } = await service.createSession('t1', { tools: [echoTool(receiver.url)] })
    mock.enqueue({
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: JSON.stringify({ q: 'x'.repeat(400) }) }],
      chunkSize: 8,
      frameDelayMs: 60,
    })
    const running = service.stepTurn('t1', session_id, { input: 'go' })
    await new Promise((resolve) => setTimeout(resolve, 400))
    await service.cancel('t1', session_id)
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

import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startScriptedEngine, useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

const completion = (events: ThreadEvent[]) => events.find((e) => e.type === 'thread.completed')

describe('changing limits: a turn raises them, a fork sets its own', () => {
  it("a turn's limits replace the session's from that turn on, and stay after a restart", async () => {
    const { service, model, receiver, store } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      limits: { max_turns: 1, max_tokens: 1_000_000 },
    })
    model.enqueue({ text: 'first' })
    expect((await service.stepTurn('t1', session_id, { input: 'one' })).status).toBe('completed')

    // Without new limits the next model request would be refused (1 of 1 used).
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"a"}' }] })
    model.enqueue({ text: 'second' })
    const raised = await service.stepTurn('t1', session_id, {
      input: 'two',
      limits: { max_turns: 3 },
    })
    expect(raised.status).toBe('completed')
    expect(completion(raised.events)).toBeUndefined()

    // Another process (no cache) reads the new limit from the log; the others stayed.
    const other = startScriptedEngine({ store })
    const view = await other.service.getSession('t1', session_id)
    expect(view.config.limits).toMatchObject({ max_turns: 3, max_tokens: 1_000_000 })
    expect(view.num_turns).toBe(3)

    // 3 of 3 used: the next turn reaches the limit.
    const ended = await other.service.stepTurn('t1', session_id, { input: 'three' })
    expect(completion(ended.events)).toMatchObject({ subtype: 'error_max_turns', num_turns: 3 })
  })

  it('a turn changes only the limits it names', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', { limits: { max_turns: 5 } })
    model.enqueue({ text: 'hello' })
    await service.stepTurn('t1', session_id, { input: 'hi', limits: { max_budget_usd: 2 } })
    const view = await service.getSession('t1', session_id)
    expect(view.config.limits).toMatchObject({ max_turns: 5, max_budget_usd: 2 })
  })

  it("a fork of a session that reached its limit runs under the fork's own limits", async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', { limits: { max_turns: 1 } })
    model.enqueue({ text: 'done once' })
    await service.stepTurn('t1', session_id, { input: 'one' })
    const stopped = await service.stepTurn('t1', session_id, { input: 'two' })
    expect(completion(stopped.events)).toMatchObject({ subtype: 'error_max_turns' })

    model.enqueue({ text: 'summary of the source' })
    const fork = await service.fork('t1', session_id, { limits: { max_turns: 2 } })
    const view = await service.getSession('t1', fork.session_id)
    expect(view.config.limits).toMatchObject({ max_turns: 2 })
    expect(view.num_turns).toBe(0)
    model.enqueue({ text: 'in the fork' })
    expect((await service.stepTurn('t1', fork.session_id, { input: 'go on' })).status).toBe(
      'completed',
    )
  })
})

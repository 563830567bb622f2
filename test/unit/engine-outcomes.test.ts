import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startScriptedEngine, useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

const completion = (events: ThreadEvent[]) => events.find((e) => e.type === 'thread.completed')

describe('thread.completed subtypes', () => {
  it('success: result is the final assistant text', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', { model: 'gpt-4o' })
    model.enqueue({
      text: 'All done.',
      usage: { input_tokens: 1000, output_tokens: 100 },
      finishReason: 'stop',
    })
    await service.stepTurn('t1', session_id, { input: 'do it' })
    const end = await service.complete('t1', session_id)
    expect(completion(end.events)).toEqual({
      type: 'thread.completed',
      thread_id: session_id,
      session_id,
      subtype: 'success',
      outcome_code: 'success',
      result: 'All done.',
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 1000,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 100,
      },
      total_cost_usd: expect.any(Number),
      num_turns: 1,
    })
  })

  it('error_max_turns: limits.max_turns counts model requests', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      limits: { max_turns: 1 },
    })
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"a"}' }] })
    const turn = await service.stepTurn('t1', session_id, { input: 'go' })
    expect(turn.status).toBe('terminal')
    expect(turn.events.at(-2)).toMatchObject({ type: 'turn.failed' })
    expect(completion(turn.events)).toMatchObject({
      subtype: 'error_max_turns',
      outcome_code: 'turn_limit_reached',
      // the last finish reason, normalized as VT Code reports it
      stop_reason: 'tool_calls',
      num_turns: 1,
    })
    expect(completion(turn.events)).not.toHaveProperty('result')
    await expect(service.stepTurn('t1', session_id, { input: 'more' })).rejects.toMatchObject({
      code: 'session_completed',
    })
    model.assertDone()
  })

  it('error_max_budget_usd: stops once spent exceeds the budget, warning once before', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      model: { name: 'priced', price: { input: 0.001, output: 0.001 } },
      limits: { max_budget_usd: 1 },
    })
    model.enqueue({ text: 'one', usage: { input_tokens: 700, output_tokens: 100 } })
    const first = await service.stepTurn('t1', session_id, { input: 'a' })
    expect(first.status).toBe('completed')
    expect(first.warnings).toEqual(['Session cost $0.8000 has reached 80% of the $1 budget.'])
    model.enqueue({ text: 'two', usage: { input_tokens: 100, output_tokens: 150 } })
    const second = await service.stepTurn('t1', session_id, { input: 'b' })
    expect(second.status).toBe('terminal')
    expect(second.warnings).toBeUndefined()
    expect(completion(second.events)).toMatchObject({
      subtype: 'error_max_budget_usd',
      outcome_code: 'budget_limit_reached',
      total_cost_usd: 1.05,
      num_turns: 2,
    })
  })

  it('does not enforce a budget without pricing and says so once', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      model: 'my-local-llama',
      limits: { max_budget_usd: 0.000001 },
    })
    model.enqueue({ text: 'a' }, { text: 'b' })
    const first = await service.stepTurn('t1', session_id, { input: 'x' })
    expect(first.warnings).toEqual([
      'Budget enforcement disabled for model `my-local-llama` because pricing metadata is unavailable',
    ])
    const second = await service.stepTurn('t1', session_id, { input: 'y' })
    expect(second.status).toBe('completed')
    expect(second.warnings).toBeUndefined()
    const end = await service.complete('t1', session_id)
    expect(completion(end.events)).not.toHaveProperty('total_cost_usd')
  })

  it('error_during_execution: completing after a failed turn is not success', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ fail: { kind: 'server', status: 500, message: 'upstream exploded' } })
    const turn = await service.stepTurn('t1', session_id, { input: 'x' })
    expect(turn.status).toBe('failed')
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn.failed' })
    const end = await service.complete('t1', session_id)
    expect(completion(end.events)).toMatchObject({
      subtype: 'error_during_execution',
      outcome_code: 'failed',
      stop_reason: expect.stringContaining('upstream exploded'),
    })
    expect(completion(end.events)).not.toHaveProperty('result')
  })

  it('a later completed turn clears the failure: completing is success again', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue(
      { fail: { kind: 'server', status: 500, message: 'flaky' } },
      { text: 'recovered' },
    )
    expect((await service.stepTurn('t1', session_id, { input: 'x' })).status).toBe('failed')
    expect((await service.stepTurn('t1', session_id, { input: 'again' })).status).toBe('completed')
    const fresh = startScriptedEngine({ store: fixture.engine.store })
    const end = await fresh.service.complete('t1', session_id)
    expect(completion(end.events)).toMatchObject({ subtype: 'success', result: 'recovered' })
  })

  it('cancelled', async () => {
    const { service } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    const end = await service.cancel('t1', session_id)
    expect(end.events).toEqual([
      expect.objectContaining({
        type: 'thread.completed',
        subtype: 'cancelled',
        outcome_code: 'cancelled',
        num_turns: 0,
      }),
    ])
  })

  it('fails the turn with exactly what to set when no model is configured', async () => {
    const bare = startScriptedEngine({ defaults: { model: undefined } })
    const { session_id } = await bare.service.createSession('t1', {})
    const turn = await bare.service.stepTurn('t1', session_id, { input: 'x' })
    expect(turn.status).toBe('failed')
    expect(turn.events.at(-1)).toMatchObject({
      type: 'turn.failed',
      message: expect.stringMatching(/OPENAI_API_KEY.*TURNLINE_MODEL/),
    })
    expect(bare.model.requests).toHaveLength(0)
  })

  it('exec runs a prompt to thread.completed', async () => {
    const { service, model } = fixture.engine
    model.enqueue({ text: 'exec answer' })
    const streamed: [string, number][] = []
    const out = await service.exec(
      't1',
      { prompt: 'hi' },
      { onEvent: (e, seq) => streamed.push([e.type, seq]) },
    )
    expect(out.events.map((e) => e.type)).toEqual([
      'thread.started',
      'turn.started',
      'item.started',
      'item.completed',
      'turn.completed',
      'thread.completed',
    ])
    expect(streamed).toEqual(out.events.map((e, i) => [e.type, i]))
    expect(completion(out.events)).toMatchObject({ subtype: 'success', result: 'exec answer' })
  })
})

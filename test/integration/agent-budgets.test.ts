import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { useEngine } from '../support/engine-fixture.ts'

/**
 * Cost guardrails on scripted sessions: each BudgetStatus is reached and ends the thread with
 * VT Code's matching subtype and outcome code (tokens have no VT Code code: ours).
 */
const fixture = useEngine()

const completion = (events: ThreadEvent[]) => events.find((e) => e.type === 'thread.completed')
const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output })

describe('session budgets', () => {
  it('step_limit_reached: the turn after max_steps ends the thread error_max_turns', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('t1', { limits: { max_steps: 2 } })
    mock.enqueue({ text: 'one' }, { text: 'two' })
    expect((await service.stepTurn('t1', session_id, { input: 'a' })).status).toBe('completed')
    expect((await service.stepTurn('t1', session_id, { input: 'b' })).status).toBe('completed')
    expect((await service.getSession('t1', session_id)).budget).toEqual({
      status: 'step_limit_reached',
      steps: { used: 2, max: 2 },
      tokens: { used: expect.any(Number) },
      cost_usd: { spent: expect.any(Number) },
    })
    const third = await service.stepTurn('t1', session_id, { input: 'c' })
    expect(third.status).toBe('terminal')
    expect(completion(third.events)).toMatchObject({
      subtype: 'error_max_turns',
      outcome_code: 'turn_limit_reached',
      num_turns: 2,
    })
    expect(third.events.find((e) => e.type === 'turn.failed')).toMatchObject({
      message: 'step limit reached: turn 3 of 2 allowed',
    })
    mock.assertDone()
  })

  it('token_limit_reached: usage at the limit ends the thread (our outcome code)', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('t1', { limits: { max_tokens: 150 } })
    mock.enqueue({ text: 'one', usage: usage(100, 30) }, { text: 'two', usage: usage(15, 5) })
    const first = await service.stepTurn('t1', session_id, { input: 'a' })
    expect(first.status).toBe('completed')
    expect((await service.getSession('t1', session_id)).budget).toMatchObject({
      status: 'ok',
      tokens: { used: 130, max: 150 },
    })
    const second = await service.stepTurn('t1', session_id, { input: 'b' })
    expect(second.status).toBe('terminal')
    expect(completion(second.events)).toMatchObject({
      subtype: 'error_during_execution',
      outcome_code: 'token_limit_reached',
      usage: { input_tokens: 115, output_tokens: 35 },
    })
    expect((await service.getSession('t1', session_id)).budget.status).toBe('token_limit_reached')
    mock.assertDone()
  })

  it('cost_limit_reached: spend above max_budget_usd ends the thread error_max_budget_usd', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      model: { name: 'self-hosted', price: { input: 0.01, output: 0.01 } },
      limits: { max_budget_usd: 1 },
    })
    mock.enqueue({
      toolCalls: [{ id: 'c1', name: 'append_note', arguments: '{"text":"spent it"}' }],
      usage: usage(60, 50),
    })
    const turn = await service.stepTurn('t1', session_id, { input: 'spend' })
    expect(turn.status).toBe('terminal')
    // The tool call of the response that crossed the limit still gets its result.
    expect(
      turn.events.some(
        (e) =>
          e.type === 'item.completed' &&
          e.item.type === 'tool_output' &&
          e.item.status === 'completed',
      ),
    ).toBe(true)
    expect(completion(turn.events)).toMatchObject({
      subtype: 'error_max_budget_usd',
      outcome_code: 'budget_limit_reached',
      total_cost_usd: 1.1,
    })
    const view = await service.getSession('t1', session_id)
    expect(view.budget).toEqual({
      status: 'cost_limit_reached',
      steps: { used: 1 },
      tokens: { used: 110 },
      cost_usd: { spent: 1.1, max: 1 },
    })
    mock.assertDone()
  })

  it('charges cached input at the cached price of model.price against max_budget_usd', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      model: { name: 'self-hosted', price: { input: 0.01, cached_input: 0.001, output: 0.01 } },
      limits: { max_budget_usd: 1 },
    })
    // 10 uncached + 50 cached + 50 output: $0.65 (at the full input price it would be $1.10).
    mock.enqueue({
      text: 'cheap',
      usage: { input_tokens: 60, cached_input_tokens: 50, output_tokens: 50 },
    })
    const turn = await service.stepTurn('t1', session_id, { input: 'spend' })
    expect(turn.status).toBe('completed')
    const view = await service.getSession('t1', session_id)
    expect(view.total_cost_usd).toBeCloseTo(0.65, 12)
    expect(view.budget).toMatchObject({ status: 'ok', cost_usd: { max: 1 } })
    expect(view.price).toEqual({ input: 0.01, cached_input: 0.001, output: 0.01 })
    mock.assertDone()
  })

  it('reports ok with no limits set', async () => {
    const { service } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    expect((await service.getSession('t1', session_id)).budget).toEqual({
      status: 'ok',
      steps: { used: 0 },
      tokens: { used: 0 },
      cost_usd: {},
    })
  })
})

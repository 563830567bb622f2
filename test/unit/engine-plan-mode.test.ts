import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

const PLAN = 'Intro.\n<proposed_plan>\n1. Read the code\n2. Fix the bug\n</proposed_plan>'
const sent = () =>
  (
    (fixture.engine.model.requests.at(-1)?.messages ?? []) as {
      role: string
      content: string
    }[]
  ).map((m) => `${m.role}:${m.content.slice(0, 40)}`)

async function planned() {
  const { service, model } = fixture.engine
  const { session_id } = await service.createSession('t1', {
    instructions: 'You are careful.',
    permissions: { mode: 'plan' },
  })
  model.enqueue({ text: PLAN })
  const turn = await service.stepTurn('t1', session_id, { input: 'fix the bug' })
  return { session_id, turn }
}

describe('plan mode', () => {
  it('ends a planning turn awaiting approval with VT Code plan events', async () => {
    const { session_id, turn } = await planned()
    expect(turn.status).toBe('awaiting_approval')
    const types = turn.events.map((e) =>
      e.type.startsWith('item.')
        ? `${e.type}:${(e as { item: { type: string } }).item.type}`
        : e.type,
    )
    expect(types.slice(-7)).toEqual([
      'item.completed:harness',
      'item.started:plan',
      'plan.delta',
      'item.completed:plan',
      'item.completed:harness',
      'plan.approval.requested',
      'turn.completed',
    ])
    expect(
      turn.events.find((e) => e.type === 'item.completed' && e.item.type === 'plan'),
    ).toMatchObject({
      item: { id: `${turn.turn_id}-plan`, text: '1. Read the code\n2. Fix the bug' },
    })
    await expect(
      fixture.engine.service.stepTurn('t1', session_id, { input: 'go on' }),
    ).rejects.toMatchObject({ code: 'conflict' })
  })

  it('execute runs the build turn at once, keeping the transcript', async () => {
    const { session_id, turn } = await planned()
    fixture.engine.model.enqueue({ text: 'Built.' })
    const built = await fixture.engine.service.approvePlan('t1', session_id, {
      decision: 'execute',
    })
    expect(built.status).toBe('completed')
    // VT Code: the decision carries the planning turn's id, before the build turn starts
    expect(built.events.slice(0, 2)).toEqual([
      {
        type: 'plan.approval.resolved',
        thread_id: session_id,
        turn_id: turn.turn_id,
        decision: 'execute',
        automatic: false,
      },
      { type: 'turn.started' },
    ])
    expect(built.turn_id).not.toBe(turn.turn_id)
    expect(sent()[0]).toBe('system:You are careful.')
    expect(sent()).toContain('user:fix the bug')
    await expect(
      fixture.engine.service.approvePlan('t1', session_id, { decision: 'execute' }),
    ).rejects.toMatchObject({
      code: 'conflict',
    })
  })

  it('fresh_context resets: context.reset fields, and the build turn sees no earlier transcript', async () => {
    const { session_id, turn } = await planned()
    fixture.engine.model.enqueue({ text: 'Built from the handoff.' })
    const built = await fixture.engine.service.approvePlan('t1', session_id, {
      decision: 'fresh_context',
    })
    const reset = built.events.find(
      (e): e is Extract<ThreadEvent, { type: 'context.reset' }> => e.type === 'context.reset',
    )
    expect(reset).toEqual({
      type: 'context.reset',
      thread_id: session_id,
      turn_id: turn.turn_id,
      trigger: 'plan_approval',
      plan_preserved: true,
      previous_context_usage_percent: expect.any(Number),
      tool_budget_reset: true,
    })
    const messages = sent()
    expect(messages[0]).toBe('system:You are careful.')
    expect(messages.slice(1)).toHaveLength(1)
    expect(messages[1]).toMatch(/^user:## HANDOFF FROM PREVIOUS AGENT/)
    const directive = (
      (fixture.engine.model.requests.at(-1)?.messages ?? []) as { content: string }[]
    )[1]
    expect(directive?.content).toContain('### Task Context\nfix the bug\n\nApproved plan:')
    expect(JSON.stringify(fixture.engine.model.requests.at(-1))).not.toContain('Intro.')
    // The handoff protocol's path: the build turn oriented afresh (the directive carries the
    // handoff, so the orientation leaves it out), and the handoff stays in the state.
    const orientation = await fixture.engine.service.getOrientation('t1', session_id)
    expect(orientation.orientation).toMatchObject({ reason: 'plan_handoff', text: '' })
    const view = await fixture.engine.service.getSession('t1', session_id)
    expect(view.num_turns).toBe(2)
  })

  it('revise with feedback plans again; cancel only records the decision', async () => {
    const { session_id } = await planned()
    fixture.engine.model.enqueue({
      text: PLAN.replace('Fix the bug', 'Fix the bug and add a test'),
    })
    const revised = await fixture.engine.service.approvePlan('t1', session_id, {
      decision: 'revise',
      feedback: 'add a test',
    })
    expect(revised.status).toBe('awaiting_approval')
    expect(sent().at(-1)).toMatch(/^user:Revise the plan/)
    const cancelled = await fixture.engine.service.approvePlan('t1', session_id, {
      decision: 'cancel',
    })
    expect(cancelled.status).toBe('completed')
    // only the decision, under the planning turn's id: no new turn
    expect(cancelled.events).toEqual([
      expect.objectContaining({ type: 'plan.approval.resolved', turn_id: revised.turn_id }),
    ])
  })
})

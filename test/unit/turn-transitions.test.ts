import { describe, expect, it } from 'vitest'
import type { EngineState } from '../../src/contract/engine-state.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import { TurnMachine } from '../../src/core/turn/turn-machine.ts'
import {
  openedTurn,
  sessionTransition,
  type TurnFrame,
  turnTransition,
} from '../../src/core/turn/turn-transitions.ts'
import { freshEngineState } from '../support/fresh-engine-state.ts'

const session = (config: Record<string, unknown> = {}): EngineState =>
  freshEngineState(config, { turn_counter: 2 })

const call = (n: number) => ({
  item_id: `item_${n}`,
  tool_call_id: `call_${n}`,
  tool_name: 'lookup',
  arguments: '{}',
})

/** A deep copy, to show a transition left its input alone. */
const frozen = (frame: TurnFrame) => structuredClone(frame)

describe('turn transitions', () => {
  it('opens the next turn: counted, nothing pending, the request that opened it', () => {
    const state = session()
    const { state: next, open } = openedTurn(state, { key: 'k', fingerprint: 'f' })
    expect(next.turn_counter).toBe(3)
    expect(state.turn_counter).toBe(2)
    expect(open).toEqual({
      turn_id: 'turn-3',
      pending_calls: [],
      tools_running: false,
      usage: ZERO_USAGE,
      tool_loops: 0,
      idempotency_key: 'k',
      request_fingerprint: 'f',
    })
  })

  it('accounts a response in the session and the turn, and changes nothing it was given', () => {
    const frame = openedTurn(session())
    const before = frozen(frame)
    const usage = { ...ZERO_USAGE, input_tokens: 10, output_tokens: 4 }
    const next = turnTransition(frame, {
      type: 'response_accounted',
      usage,
      reasoningTokens: 2,
      costUsd: 0.5,
      stopReason: 'stop',
      text: 'hi',
      pricingWarned: false,
      budgetWarned: true,
    })
    expect(frame).toEqual(before)
    expect(next.state).toMatchObject({
      model_requests: 1,
      usage,
      reasoning_tokens: 2,
      cost_usd: 0.5,
      last_stop_reason: 'stop',
      last_assistant_text: 'hi',
      budget_warned: true,
    })
    expect(next.open.usage).toEqual(usage)
  })

  it('walks a tool round: requested, started, one call waiting, settled', () => {
    let frame = openedTurn(session({ harness: { max_tool_calls: 5 } }))
    frame = turnTransition(frame, { type: 'tool_round_requested', calls: [call(0), call(1)] })
    expect(frame.open).toMatchObject({ tool_loops: 1, pending_calls: [call(0), call(1)] })
    expect(frame.open).not.toHaveProperty('tool_calls_run')
    frame = turnTransition(frame, { type: 'call_started' })
    frame = turnTransition(frame, { type: 'tools_started' })
    frame = turnTransition(frame, { type: 'call_settled', itemId: 'item_0' })
    frame = turnTransition(frame, { type: 'call_started' })
    frame = turnTransition(frame, { type: 'call_waiting', itemId: 'item_1', resume: { id: 'x' } })
    expect(frame.open).toMatchObject({
      tool_calls_run: 2,
      tools_running: true,
      pending_calls: [call(1)],
      waiting: { item_id: 'item_1', resume: { id: 'x' } },
    })
    frame = turnTransition(frame, { type: 'call_settled', itemId: 'item_1' })
    frame = turnTransition(frame, { type: 'tools_settled' })
    expect(frame.open).toMatchObject({ pending_calls: [], tools_running: false })
    expect(frame.open).not.toHaveProperty('waiting')
  })

  it('counts the calls started only under harness.max_tool_calls', () => {
    const frame = openedTurn(session())
    expect(turnTransition(frame, { type: 'call_started' })).toBe(frame)
  })

  it('asks for a permission, records the decision, and uses it once', () => {
    let frame = openedTurn(session())
    frame = turnTransition(frame, { type: 'tools_started' })
    const pending = {
      item_id: 'item_0',
      tool_call_id: 'call_0',
      tool_name: 'lookup',
      requested_at: 1,
    }
    frame = turnTransition(frame, { type: 'permission_requested', pending })
    expect(frame.open).toMatchObject({ pending_permission: pending, tools_running: false })
    const approval = { item_id: 'item_0', decision: 'allow' as const }
    frame = turnTransition(frame, { type: 'permission_decided', approval })
    expect(frame.open).not.toHaveProperty('pending_permission')
    expect(frame.open.approval).toEqual(approval)
    frame = turnTransition(frame, { type: 'approval_used' })
    expect(frame.open).not.toHaveProperty('approval')
  })

  it('keeps the open turn in the state, then closes it completed, failed or ended', () => {
    const opened = turnTransition(openedTurn(session()), { type: 'turn_left_open' })
    expect(opened.state.open_turn).toBe(opened.open)
    const failed = turnTransition(opened, { type: 'turn_failed', message: 'boom' })
    expect(failed.state).toMatchObject({ open_turn: null, last_failure: 'boom' })
    const completed = turnTransition(failed, { type: 'turn_completed' })
    expect(completed.state).toMatchObject({ open_turn: null, last_failure: null })
    expect(turnTransition(opened, { type: 'turn_ended' }).state.open_turn).toBeNull()
  })

  it('the machine applies transitions to the objects it holds, keeping their identity', () => {
    const state = session()
    const turn = TurnMachine.opening(state)
    const { open } = turn
    expect(state.turn_counter).toBe(3)
    expect(turn.nextItemId()).toBe('item_0')
    expect(turn.nextItemId()).toBe('item_1')
    turn.apply({ type: 'tool_round_requested', calls: [call(1)] })
    turn.apply({ type: 'turn_left_open' })
    expect(turn.open).toBe(open)
    expect(state.open_turn).toBe(open)
    expect(open.pending_calls).toEqual([call(1)])
    expect(state.item_counter).toBe(2)
    turn.apply({ type: 'turn_completed' })
    expect(state.open_turn).toBeNull()
  })

  it("a turn's new limits replace the session's named ones; the others stay", () => {
    const state = session()
    const before = structuredClone(state)
    const next = sessionTransition(state, {
      type: 'limits_changed',
      limits: { max_turns: 7, max_budget_usd: 0.5 },
    })
    expect(next.config.limits).toEqual({
      ...state.config.limits,
      max_turns: 7,
      max_budget_usd: 0.5,
    })
    expect(state).toEqual(before)
  })
})

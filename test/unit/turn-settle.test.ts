import { describe, expect, it } from 'vitest'
import { TurnMachine } from '../../src/core/turn/turn-machine.ts'
import { openedTurn, type TurnTransition } from '../../src/core/turn/turn-transitions.ts'
import { freshEngineState } from '../support/fresh-engine-state.ts'

/**
 * The machine settles the first pending call in place (turn-machine.ts): the state and open turn
 * it holds after any sequence must be, byte for byte, what it held when every settle went through
 * `turnTransition` (a copy of the rest of the round each time), as this machine still does.
 */
class SettlingByTransition extends TurnMachine {
  protected override settledFirst(): boolean {
    return false
  }
}

const session = () => freshEngineState({ harness: { max_tool_calls: 50 } })

/** A small deterministic generator, so a failure names its seed. */
function random(seed: number) {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s % n
  }
}

function script(seed: number): TurnTransition[] {
  const pick = random(seed)
  const out: TurnTransition[] = []
  let next = 0
  let pending: string[] = []
  for (let step = 0; step < 60; step++) {
    const roll = pick(10)
    if (pending.length === 0 || roll === 0) {
      const calls = Array.from({ length: 1 + pick(8) }, () => {
        const n = next++
        return { item_id: `item_${n}`, tool_call_id: `c${n}`, tool_name: 't', arguments: '{}' }
      })
      out.push({ type: 'tool_round_requested', calls })
      pending = calls.map((c) => c.item_id)
    } else if (roll <= 5) {
      // Mostly the first, as the tool loop does; sometimes another, or one not pending.
      const which = pick(4) === 0 ? pick(pending.length + 1) : 0
      const itemId = pending[which] ?? 'item_none'
      out.push({ type: 'call_settled', itemId })
      pending = pending.filter((id) => id !== itemId)
    } else if (roll === 6) {
      out.push({ type: 'call_waiting', itemId: pending[0] ?? '', resume: { n: step } })
    } else if (roll === 7) {
      out.push({ type: 'turn_left_open' })
    } else if (roll === 8) {
      out.push({ type: 'call_started' })
    } else {
      out.push({ type: pick(2) ? 'tools_started' : 'item_numbered' })
    }
  }
  return out
}

describe('settling a call in place', () => {
  it('leaves the state and open turn byte for byte as settling by the transition did', () => {
    let settledFirst = 0
    for (let seed = 1; seed <= 400; seed++) {
      const opened = openedTurn(session())
      const slow = new SettlingByTransition(
        structuredClone(opened.state),
        structuredClone(opened.open),
      )
      const machine = new TurnMachine(structuredClone(opened.state), structuredClone(opened.open))
      for (const transition of script(seed)) {
        if (transition.type === 'call_settled') {
          if (machine.open.pending_calls[0]?.item_id === transition.itemId) settledFirst++
        }
        slow.apply(structuredClone(transition))
        machine.apply(structuredClone(transition))
        const held = JSON.stringify({ state: machine.state, open: machine.open })
        expect(held, `seed ${seed}`).toBe(JSON.stringify({ state: slow.state, open: slow.open }))
        expect(machine.state.open_turn === machine.open).toBe(slow.state.open_turn === slow.open)
      }
    }
    expect(settledFirst).toBeGreaterThan(2000)
  })

  it('settles a round of 4,000 calls in order, each gone as it settles', () => {
    const machine = TurnMachine.opening(session())
    const calls = Array.from({ length: 4000 }, (_, n) => ({
      item_id: `item_${n}`,
      tool_call_id: `c${n}`,
      tool_name: 't',
      arguments: '{}',
    }))
    machine.apply({ type: 'tool_round_requested', calls })
    machine.apply({ type: 'call_waiting', itemId: 'item_0', resume: {} })
    for (let n = 0; n < 4000; n++) {
      expect(machine.open.pending_calls[0]?.item_id).toBe(`item_${n}`)
      machine.apply({ type: 'call_settled', itemId: `item_${n}` })
      expect(machine.open.pending_calls.length).toBe(3999 - n)
      expect(machine.open.waiting).toBeUndefined()
    }
  })
})

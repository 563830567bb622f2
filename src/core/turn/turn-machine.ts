import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import {
  openedTurn,
  type SessionTransition,
  sessionTransition,
  type TurnTransition,
  turnTransition,
} from './turn-transitions.ts'

/**
 * The one writer of a turn's state: it holds the invocation's engine state and open turn and
 * applies the named transitions of turn-transitions.ts to them. The objects keep their
 * identity (the turn writer commits `state`, the steps read `open`): each transition's result
 * replaces their contents.
 */
export class TurnMachine {
  constructor(
    readonly state: EngineState,
    readonly open: OpenTurn,
  ) {}

  /** Opens the session's next turn in `state` (`turn_opened`) and holds it. */
  static opening(state: EngineState, call?: { key: string; fingerprint: string }): TurnMachine {
    const opened = openedTurn(state, call)
    replaceContents(state, opened.state)
    return new TurnMachine(state, opened.open)
  }

  /** The session's next item id (`item_<n>`, dense from 0), counted by `item_numbered`. */
  nextItemId(): string {
    const id = `item_${this.state.item_counter}`
    this.apply({ type: 'item_numbered' })
    return id
  }

  apply(transition: TurnTransition): void {
    if (transition.type === 'call_settled' && this.settledFirst(transition.itemId)) return
    const next = turnTransition({ state: this.state, open: this.open }, transition)
    replaceContents(this.open, next.open)
    replaceContents(this.state, next.state)
    // Kept in the state, the open turn is this one object (committed as it stands then).
    if (next.state.open_turn === next.open) this.state.open_turn = this.open
  }

  /**
   * `call_settled` for the first pending call, as the tool loop settles them (in order), done in
   * place: the open turn `turnTransition` gives (the call gone, no longer waited on), without
   * copying the rest of the round, which made a round of N calls cost N². The machine owns the
   * pending list (commits copy what they keep), item ids are unique in a session (`item_<n>`),
   * and V8 drops an array's first element in constant time while its store is in the regular
   * heap (up to ~16k elements; a round holds at most ~4,000 calls, bound by the event buffer).
   * Another call settled is left to the transition.
   */
  protected settledFirst(itemId: string): boolean {
    const pending = this.open.pending_calls
    if (pending[0]?.item_id !== itemId) return false
    pending.shift()
    delete this.open.waiting
    return true
  }
}

/** Applies a session transition (between turns) to `state` in place. */
export function applySessionTransition(state: EngineState, transition: SessionTransition): void {
  replaceContents(state, sessionTransition(state, transition))
}

/** Gives `target` exactly the own fields of `source` (a field `source` lacks is removed). */
function replaceContents<T extends object>(target: T, source: T): void {
  if (target === source) return
  for (const key of Object.keys(target)) {
    if (!(key in source)) delete (target as Record<string, unknown>)[key]
  }
  Object.assign(target, source)
}

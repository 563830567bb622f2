import type { EngineState } from '../../contract/engine-state.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { cloneJson } from '../../shared/clone-json.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'

/**
 * Engine states this process committed itself. After a commit, the snapshot's `state` is the
 * writer's own typed EngineState (a private copy of it) merged by the store, so the next turn
 * needs no zod parse of it: only a copy it may change. A state folded from stored batches or a
 * checkpoint (another process wrote it) is parsed, as at every storage boundary.
 */
const committedHere = new WeakSet<object>()

/** Marks the state of a snapshot returned by our own commit. */
export function rememberCommittedState(state: SessionSnapshot['state']): void {
  if (state) committedHere.add(state)
}

/** The snapshot's engine state as a private copy the invocation may change. */
export function writableState(snapshot: SessionSnapshot): EngineState {
  const state = snapshot.state
  if (state && committedHere.has(state)) return cloneJson(state) as EngineState
  return cloneJson(parseEngineState(state))
}

import type { EngineState } from '../../contract/engine-state.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { cloneJson } from '../../shared/clone-json.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'

/**
 * Engine states this process committed itself, with the compact JSON of each of their fields as
 * the commit compared them. After a commit, the snapshot's `state` is the writer's own typed
 * EngineState (a private copy of it) merged by the store, so the next turn needs no zod parse of
 * it: only a copy it may change. A state folded from stored batches or a checkpoint (another
 * process wrote it) is parsed, as at every storage boundary.
 */
const committedHere = new WeakMap<object, ReadonlyMap<string, string>>()

/**
 * Marks the state of a snapshot returned by our own commit; `fields` are the JSON texts of the
 * fields the commit compared (`statePatch`), which the state now holds.
 */
export function rememberCommittedState(
  state: SessionSnapshot['state'],
  fields: ReadonlyMap<string, string> = new Map(),
): void {
  if (state) committedHere.set(state, fields)
}

/** The snapshot's engine state as a private copy the invocation may change. */
export function writableState(snapshot: SessionSnapshot): EngineState {
  const state = snapshot.state
  if (state && committedHere.has(state)) return cloneJson(state) as EngineState
  return cloneJson(parseEngineState(state))
}

/**
 * The fields of `after` to commit over the state `before` (a private copy of each): those whose
 * JSON differs from `before`'s or that `before` lacks — the store writes only such fields of a
 * batch's state, so the others need no copy — and the JSON of every field of `after`, which the
 * state after the commit holds (`rememberCommittedState`). A field of a state this process
 * committed is compared with the JSON kept for it instead of being written again.
 */
export function statePatch(
  before: SessionSnapshot['state'],
  after: Readonly<Record<string, unknown>>,
): { patch: Record<string, unknown>; fields: Map<string, string> } {
  const known = before ? committedHere.get(before) : undefined
  const patch: Record<string, unknown> = {}
  const fields = new Map<string, string>()
  for (const [key, value] of Object.entries(after)) {
    const json = JSON.stringify(value)
    if (json !== undefined) fields.set(key, json)
    if (before && value !== undefined && key in before) {
      const was = known?.get(key) ?? JSON.stringify(before[key])
      if (was === json) continue
    }
    patch[key] = cloneJson(value)
  }
  return { patch, fields }
}

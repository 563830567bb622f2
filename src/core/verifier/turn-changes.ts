import type { TurnChanges } from '../../contract/agent-state.ts'
import { RECENT_CHANGED_TURNS } from '../../contract/agent-state.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'

/**
 * A turn's proposed change: the files its `file_change` items touched, kept in the engine state
 * (the newest 8 turns that changed files) with their verification. With
 * `harness.verification: required`, the next turn — and completing the session — waits until
 * the newest change was verified (an approval lets it go on; a rejection too, and that turn
 * starts with the verifier's reasons).
 */

export function recordTurnChanges(
  state: EngineState,
  turnId: string,
  events: readonly ThreadEvent[],
): void {
  const touched = new Map<string, 'add' | 'delete' | 'update'>()
  for (const event of events) {
    if (event.type !== 'item.completed' || event.item.type !== 'file_change') continue
    if (event.item.status !== 'completed') continue
    for (const change of event.item.changes) touched.set(change.path, change.kind)
  }
  if (touched.size === 0) return
  state.agent ??= {}
  const changes = [...(state.agent.changes ?? [])]
  const last = changes.at(-1)
  const merged = new Map(last?.turn_id === turnId ? last.changes.map((c) => [c.path, c.kind]) : [])
  for (const [path, kind] of touched) merged.set(path, kind)
  const entry: TurnChanges = {
    turn_id: turnId,
    changes: [...merged].map(([path, kind]) => ({ path, kind })),
  }
  if (last?.turn_id === turnId) changes[changes.length - 1] = entry
  else changes.push(entry)
  state.agent.changes = changes.slice(-RECENT_CHANGED_TURNS)
}

/** The newest change, while it waits for a verification the session requires; else undefined. */
export function unverifiedChange(state: EngineState): TurnChanges | undefined {
  if (state.config.harness.verification !== 'required') return undefined
  const last = state.agent?.changes?.at(-1)
  return last && !last.verification ? last : undefined
}

/** 409 while the newest change waits for a verification the session requires. */
export function assertVerified(state: EngineState, action: string): void {
  const error = verificationRequired(state, action)
  if (error) throw error
}

/** What `assertVerified` refuses `action` with, or undefined when nothing waits. */
export function verificationRequired(
  state: EngineState,
  action: string,
): TurnlineError | undefined {
  const last = unverifiedChange(state)
  if (!last) return undefined
  const files = last.changes
    .map((c) => c.path)
    .slice(0, 10)
    .join(', ')
  return new TurnlineError(
    'conflict',
    `${last.turn_id} changed ${files}; harness.verification is required: POST /v1/sessions/:id/verify before ${action}`,
    { retryable: false, details: { turn_id: last.turn_id, reason: 'verification_required' } },
  )
}

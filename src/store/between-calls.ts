import type { SessionManifest } from '../contract/session-manifest.ts'

/** What a session waits for between calls, as its manifest keeps it (`between_calls`). */
export type BetweenCalls = NonNullable<SessionManifest['between_calls']>

/**
 * The manifest's `between_calls` of an engine state, or of a batch's state patch folded over the
 * manifest's (a patch names `open_turn` or `plan_approval` only when it changes them). The
 * engine state is opaque to the store: only the presence of these fields is read, as
 * core/session/current-activity.ts reads them.
 */
export function betweenCalls(
  state: Record<string, unknown> | undefined,
  before: BetweenCalls | undefined = undefined,
): { between_calls?: BetweenCalls } {
  let turn = before?.turn
  let plan = before?.plan
  if (state && 'open_turn' in state) turn = openTurnState(state.open_turn)
  if (state && 'plan_approval' in state) plan = state.plan_approval ? true : undefined
  if (turn === undefined && plan === undefined) return {}
  return { between_calls: { ...(turn ? { turn } : {}), ...(plan ? { plan } : {}) } }
}

function openTurnState(open: unknown): BetweenCalls['turn'] {
  if (typeof open !== 'object' || open === null) return undefined
  const { pending_permission, waiting } = open as Record<string, unknown>
  if (pending_permission) return 'awaiting_approval'
  return waiting ? 'waiting' : 'open'
}

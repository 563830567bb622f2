import type { HistoryMessage } from '../../contract/history-message.ts'
import type { InterjectedEvent } from '../../contract/turn-events.ts'
import type { QueuedIntent } from '../../ports/coordinator.ts'
import { copyIntent } from '../../ports/coordinator-checks.ts'

/**
 * Steering follow-ups at a turn boundary (VT Code steering, §7 of the contract). Pending intents
 * come from `Coordinator.pendingIntents` (oldest first, queued and in flight). An intent is
 * applied — appended as a user message tagged with its `intent_id` — only if its id is in neither
 * the applied window (newest 64 ids) nor any user message of the transcript; identical text under
 * a different id is a different intent and is applied. The ids of the applied intents go into the
 * committing batch (`applied_intents`, folded into the window by `mergeApplied`) and are
 * acknowledged (`Coordinator.ackIntents`) only after that batch committed; ids found already
 * applied (a crash between commit and acknowledgement) are acknowledged without being applied
 * again.
 *
 * Each applied intent also yields VT Code's `interjected{source:"queue", image_count:0,
 * redirect_kind:"interjection"}` — the event VT Code emits when it delivers a queued follow-up
 * into the conversation (intents carry text only, hence no images).
 */

export interface IntentBoundaryInput {
  /** `Coordinator.pendingIntents(sessionId)`, oldest first. */
  pending: readonly QueuedIntent[]
  /** The snapshot's `appliedIntents` window. */
  appliedWindow: readonly string[]
  /** The transcript of the current segment. */
  history: readonly HistoryMessage[]
}

export interface IntentBoundary {
  /** Intents applied now, in queue order. */
  apply: QueuedIntent[]
  /** The user messages to append, tagged with `intent_id`, in queue order. */
  messages: HistoryMessage[]
  /** Ids for the committing batch's `applied_intents`. */
  appliedIds: string[]
  /** Pending ids that were applied before (window or tagged history): acknowledge, never apply. */
  alreadyApplied: string[]
  /** Every id to pass to `ackIntents` once the batch committed: applied now and applied before. */
  ack: string[]
  /** One `interjected` event per applied intent. */
  events: InterjectedEvent[]
}

/** The queued-follow-up event (one per applied intent). */
export const QUEUED_INTERJECTION: Readonly<InterjectedEvent> = Object.freeze({
  type: 'interjected',
  source: 'queue',
  image_count: 0,
  redirect_kind: 'interjection',
})

/** Which pending intents to apply at this boundary, and what to acknowledge after the commit. */
export function planIntentBoundary(input: IntentBoundaryInput): IntentBoundary {
  const applied = new Set(input.appliedWindow)
  for (const message of input.history) {
    if (message.role === 'user' && message.intent_id !== undefined) applied.add(message.intent_id)
  }
  const seen = new Set<string>()
  const apply: QueuedIntent[] = []
  const alreadyApplied: string[] = []
  for (const intent of input.pending) {
    if (seen.has(intent.id)) continue
    seen.add(intent.id)
    if (applied.has(intent.id)) alreadyApplied.push(intent.id)
    else apply.push(copyIntent(intent))
  }
  const appliedIds = apply.map((intent) => intent.id)
  return {
    apply,
    messages: apply.map((intent) => ({ role: 'user', content: intent.text, intent_id: intent.id })),
    appliedIds,
    alreadyApplied,
    ack: [...appliedIds, ...alreadyApplied],
    events: apply.map(() => ({ ...QUEUED_INTERJECTION })),
  }
}

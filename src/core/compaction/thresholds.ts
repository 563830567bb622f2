/**
 * When to compact (VT Code's unified auto-compaction). The hard threshold is the session
 * ceiling: an explicit `auto_compaction_threshold_tokens` capped by the provider's capacity, else
 * 90 % of the smaller of the provider's capacity and `max_context_tokens`. The soft threshold is
 * 90 % of the hard one: crossing it marks compaction pending for the next turn boundary; at the
 * hard one compaction runs before the next model request — but never as a hidden summary call in
 * the middle of an active tool loop, where it is deferred to the turn boundary instead.
 */

export const DEFAULT_COMPACTION_TRIGGER_RATIO = 0.9
export const DEFAULT_MAX_CONTEXT_TOKENS = 160_000

export interface ThresholdSettings {
  /** `harness.auto_compaction_threshold_tokens`; absent or ≤ 0 = derive from the ratio. */
  autoCompactionThresholdTokens?: number | undefined
  /** `harness.max_context_tokens` (default 160,000); 0 = unknown. */
  maxContextTokens?: number | undefined
  /** The provider's hard context capacity for the model; absent or 0 = unknown. */
  providerCapacity?: number | undefined
}

export interface CompactionThresholds {
  hard: number
  soft: number
}

/** The thresholds, or undefined when neither a threshold nor any context size is known. */
export function compactionThresholds(
  settings: ThresholdSettings,
): CompactionThresholds | undefined {
  const configured = positive(settings.autoCompactionThresholdTokens)
  const capacity = positive(settings.providerCapacity)
  const budget = positive(settings.maxContextTokens ?? DEFAULT_MAX_CONTEXT_TOKENS)
  let hard: number
  if (configured !== undefined) {
    hard = capacity !== undefined ? Math.min(configured, capacity) : configured
  } else {
    const sizes = [capacity, budget].filter((size): size is number => size !== undefined)
    if (sizes.length === 0) return undefined
    hard = Math.round(DEFAULT_COMPACTION_TRIGGER_RATIO * Math.min(...sizes))
  }
  hard = Math.max(1, Math.floor(hard))
  return { hard, soft: hard - Math.floor(hard / 10) }
}

function positive(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined
}

export type CompactionAction = 'none' | 'pending' | 'now'

export type CompactionReason =
  | 'disabled'
  | 'suppressed'
  | 'no_threshold'
  | 'below_soft'
  | 'soft_crossed'
  | 'pending_at_boundary'
  | 'awaiting_boundary'
  | 'hard_crossed'
  | 'deferred_in_tool_loop'

export interface CompactionDecision {
  action: CompactionAction
  reason: CompactionReason
  tokens: number
  thresholds: CompactionThresholds | undefined
}

export interface DecisionInput {
  /** Estimated prompt tokens of the next request. */
  tokens: number
  thresholds: CompactionThresholds | undefined
  /** `harness.auto_compaction_enabled`. */
  enabled: boolean
  /** A soft crossing was recorded earlier and not yet acted on. */
  pending: boolean
  /**
   * The next request is a follow-up inside the current turn's tool loop (tool results were just
   * recorded). False at a turn boundary: before the first request of a turn.
   */
  inToolLoop: boolean
  /** Auto-compaction is held back after a failed compaction. */
  suppressed?: boolean
}

/**
 * `now`: compact before the next model request. `pending`: record the flag and compact at the
 * next turn boundary. `none`: nothing to do (a pending flag, if any, stays as it is).
 */
export function decideCompaction(input: DecisionInput): CompactionDecision {
  const { tokens, thresholds } = input
  const decision = (action: CompactionAction, reason: CompactionReason): CompactionDecision => ({
    action,
    reason,
    tokens,
    thresholds,
  })
  if (!input.enabled) return decision('none', 'disabled')
  if (input.suppressed) return decision('none', 'suppressed')
  if (!thresholds) return decision('none', 'no_threshold')
  if (tokens >= thresholds.hard) {
    return input.inToolLoop
      ? decision('pending', 'deferred_in_tool_loop')
      : decision('now', 'hard_crossed')
  }
  if (input.pending) {
    return input.inToolLoop
      ? decision('pending', 'awaiting_boundary')
      : decision('now', 'pending_at_boundary')
  }
  if (tokens >= thresholds.soft) return decision('pending', 'soft_crossed')
  return decision('none', 'below_soft')
}

import { TurnlineError } from '../../contract/errors.ts'
import {
  type GroundedFact,
  MAX_APPLIED_INTENT_IDS,
  MAX_PENDING_INTENTS,
  MEMORY_ENVELOPE_SCHEMA_VERSION,
  MEMORY_LIST_LIMIT,
  type MemoryEnvelope,
  type QueuedIntent,
} from '../../contract/memory-envelope.ts'

/**
 * A new memory envelope at a compaction, merged over the previous one as VT Code does: text fields
 * take the update, else keep the prior value; lists are whitespace-normalized, de-duplicated
 * (case-insensitively, the newest occurrence wins) and keep their 5 newest entries, except
 * touched_files (exact de-duplication, no limit); grounded facts keep the 5 newest distinct facts;
 * pending intents are the current snapshot (≤ 16); applied intent ids are merged into the 64-id
 * FIFO window, newest kept.
 */

export interface EnvelopeUpdate {
  objective?: string | undefined
  task_summary?: string | undefined
  spec_summary?: string | undefined
  evaluation_summary?: string | undefined
  verification_summary?: string | undefined
  constraints?: readonly string[]
  touched_files?: readonly string[]
  open_questions?: readonly string[]
  verification_todo?: readonly string[]
  delegation_notes?: readonly string[]
  grounded_facts?: readonly GroundedFact[]
}

export interface BuildEnvelopeInput {
  sessionId: string
  /** The compaction summary (the model's answer to the summary request). */
  summary: string
  /** RFC 3339 time of the compaction. */
  generatedAt: string
  historyArtifactPath?: string | undefined
  prior?: MemoryEnvelope | undefined
  update?: EnvelopeUpdate
  /** Intents accepted and not yet applied, oldest first. */
  pendingIntents?: readonly QueuedIntent[]
  /** Intent ids applied since the prior envelope, oldest first. */
  appliedIntentIds?: readonly string[]
}

export function buildMemoryEnvelope(input: BuildEnvelopeInput): MemoryEnvelope {
  const { prior, update = {} } = input
  const pending = input.pendingIntents ?? prior?.pending_intents ?? []
  if (pending.length > MAX_PENDING_INTENTS) {
    throw new TurnlineError(
      'invalid_input',
      `a memory envelope holds at most ${MAX_PENDING_INTENTS} pending intents, got ${pending.length}`,
    )
  }
  const merge = (field: ListField) => mergeRecent(prior?.[field] ?? [], update[field] ?? [])
  return {
    session_id: input.sessionId,
    schema_version: MEMORY_ENVELOPE_SCHEMA_VERSION,
    summary: input.summary.trim(),
    objective: update.objective ?? prior?.objective,
    task_summary: update.task_summary ?? prior?.task_summary,
    spec_summary: update.spec_summary ?? prior?.spec_summary,
    evaluation_summary: update.evaluation_summary ?? prior?.evaluation_summary,
    verification_summary: update.verification_summary ?? prior?.verification_summary,
    constraints: merge('constraints'),
    grounded_facts: mergeFacts(prior?.grounded_facts ?? [], update.grounded_facts ?? []),
    touched_files: mergeKeepNewest(
      prior?.touched_files ?? [],
      update.touched_files ?? [],
      Number.POSITIVE_INFINITY,
      (file) => file,
    ),
    open_questions: merge('open_questions'),
    verification_todo: merge('verification_todo'),
    delegation_notes: merge('delegation_notes'),
    pending_intents: pending.map((intent) => ({ id: intent.id, text: intent.text })),
    applied_intent_ids: mergeKeepNewest(
      prior?.applied_intent_ids ?? [],
      input.appliedIntentIds ?? [],
      MAX_APPLIED_INTENT_IDS,
      (id) => id,
    ),
    history_artifact_path: input.historyArtifactPath ?? prior?.history_artifact_path,
    generated_at: input.generatedAt,
  }
}

type ListField = 'constraints' | 'open_questions' | 'verification_todo' | 'delegation_notes'

export function normalizeWhitespace(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(' ')
}

/** Appends updates; an entry equal (by key) to an earlier one moves to the end; keeps `limit` newest. */
function mergeKeepNewest<T>(
  prior: readonly T[],
  updates: readonly T[],
  limit: number,
  key: (item: T) => string,
): T[] {
  const merged = [...prior]
  for (const item of updates) {
    const at = merged.findIndex((entry) => key(entry) === key(item))
    if (at >= 0) merged.splice(at, 1)
    merged.push(item)
  }
  return Number.isFinite(limit) ? merged.slice(Math.max(0, merged.length - limit)) : merged
}

function mergeRecent(prior: readonly string[], updates: readonly string[]): string[] {
  const clean = (items: readonly string[]) => items.map(normalizeWhitespace).filter(Boolean)
  return mergeKeepNewest(clean(prior), clean(updates), MEMORY_LIST_LIMIT, (item) =>
    item.toLowerCase(),
  )
}

function mergeFacts(
  prior: readonly GroundedFact[],
  updates: readonly GroundedFact[],
): GroundedFact[] {
  return mergeKeepNewest(prior, updates, MEMORY_LIST_LIMIT, (fact) =>
    normalizeWhitespace(fact.fact).toLowerCase(),
  ).map((fact) => ({ fact: fact.fact, source: fact.source }))
}

import * as z from 'zod'
import { AgentStateSchema } from './agent-state.ts'
import { CompactionStateSchema } from './compaction-state.ts'
import { PermissionDecisionSchema } from './enums.ts'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'
import { McpStateSchema } from './mcp-config.ts'
import { PendingPermissionSchema } from './permission-resolution.ts'
import { PendingPlanApprovalSchema } from './plan-approval.ts'
import { SessionConfigSchema } from './session-config.ts'
import { UsageSchema } from './usage.ts'

/**
 * The turn engine's state, kept in each batch's `state` (shallow-merged by the store) and in
 * checkpoints. `config` is written once, by batch 0; later batches carry the rest, with null
 * for a cleared field (the store merges top-level keys, so an absent key would keep its value).
 */
export const ENGINE_STATE_VERSION = 1

const Count = lazySchema(() => z.number().int().nonnegative())

/** A tool call committed before it ran; resolved (output recorded) before the turn goes on. */
export const PendingCallSchema = lazySchema(() =>
  z.object({
    item_id: z.string(),
    tool_call_id: z.string(),
    tool_name: z.string(),
    arguments: z.string(),
  }),
)
export type PendingCall = z.infer<typeof PendingCallSchema>

/** A turn that committed part of its work and has not ended yet (crash, wait, approval). */
export const OpenTurnSchema = lazySchema(() =>
  z.object({
    turn_id: z.string(),
    idempotency_key: z.string().optional(),
    /** Digest of the request that opened the turn under `idempotency_key` (absent before v0.2). */
    request_fingerprint: z.string().optional(),
    pending_calls: z.array(PendingCallSchema),
    /** True from just before the first pending call runs: a crash then interrupted them. */
    tools_running: z.boolean().default(false),
    /** The call waiting for a human decision (the turn ended `awaiting_approval`). */
    pending_permission: PendingPermissionSchema.optional(),
    /** The decision recorded by `POST …/permissions`, applied when the turn continues. */
    approval: z
      .object({
        item_id: z.string(),
        decision: PermissionDecisionSchema,
        message: z.string().optional(),
      })
      .optional(),
    /** A tool still running in the sandbox: what its handler needs to resume the wait. */
    waiting: z.object({ item_id: z.string(), resume: z.record(z.string(), z.json()) }).optional(),
    /** Usage of the turn so far. */
    usage: UsageSchema,
    tool_loops: Count,
    /** Server-run tool calls started in the turn (`harness.max_tool_calls`); absent: none. */
    tool_calls_run: Count.optional(),
  }),
)
export type OpenTurn = z.infer<typeof OpenTurnSchema>

/** Where a finished turn's batches are, so a retried Idempotency-Key can be answered. */
export const TurnRecordSchema = lazySchema(() =>
  z.object({
    key: z.string(),
    /**
     * Digest of the operation and request the key was first used with: the key sent again with a
     * different request is refused (422), never answered with this turn. Absent in older records.
     */
    request_fingerprint: z.string().optional(),
    turn_id: z.string(),
    status: z.enum(['completed', 'failed', 'waiting', 'awaiting_approval', 'terminal']),
    first_batch: Count,
    last_batch: Count,
    warnings: z.array(z.string()).optional(),
  }),
)
export type TurnRecord = z.infer<typeof TurnRecordSchema>
export const RECENT_TURN_RECORDS = 16

/**
 * Compaction and context-reset bookkeeping (see docs/compaction.md): the request segment, the
 * pending flag, the usage anchor, suppression, plus what spans turns here — a turn that ended
 * blocked after a failed recovery, consecutive stalled turns, and a written context reset
 * manifest the next turn starts from. Every field is optional: older states parse unchanged.
 */
export const EngineCompactionSchema = lazySchema(() =>
  CompactionStateSchema.extend({
    /** The last turn ended blocked (recovery did not help): a turn without input retries it. */
    blocked: z.boolean().optional(),
    /** Consecutive turns that ended failed (`context_reset_mode: on_stall`). */
    stall_count: Count.optional(),
    /** Key of a context reset manifest not yet consumed: the next turn starts from orientation. */
    reset_manifest: z.string().optional(),
    /**
     * A model switch's compaction was stopped before the platform's timeout (nothing of it kept):
     * the turn's continuation runs it again as a switch's (trigger `model_switch`, forced).
     */
    switch_pending: z.boolean().optional(),
  }),
)
export type EngineCompaction = z.infer<typeof EngineCompactionSchema>

export const EngineStateSchema = lazySchema(() =>
  z.object({
    engine_version: z.literal(ENGINE_STATE_VERSION),
    config: SessionConfigSchema,
    usage: UsageSchema,
    /** Reasoning tokens within usage.output_tokens, as far as the provider reported them. */
    reasoning_tokens: Count.nullish(),
    /** Tokens of `usage` estimated with a tokenizer because the provider reported none. */
    estimated_tokens: Count.nullish(),
    /** Model requests made (thread.completed num_turns; limits.max_turns counts these). */
    model_requests: Count,
    cost_usd: z.number().nonnegative().nullish(),
    budget_warned: z.boolean(),
    pricing_warned: z.boolean(),
    item_counter: Count,
    turn_counter: Count,
    last_assistant_text: z.string().nullish(),
    last_stop_reason: z.string().nullish(),
    /** Message of the last turn.failed, cleared by a completed turn. */
    last_failure: z.string().nullish(),
    open_turn: OpenTurnSchema.nullable().optional(),
    /** Permission mode in force when it differs from the config's (plan approval switches it). */
    permission_mode: z.enum(['default', 'plan', 'auto']).nullish(),
    /** A plan waiting for `POST …/plan-approval` (plan mode). */
    plan_approval: PendingPlanApprovalSchema.nullish(),
    /** The approved plan, preserved across a fresh-context handoff. */
    approved_plan: z.string().nullish(),
    /** Sandbox work happens in another workspace's folder (a sub-agent in a git worktree). */
    sandbox_placement: z.object({ session_id: z.string(), base_dir: z.string() }).nullish(),
    recent_turns: z.array(TurnRecordSchema).max(RECENT_TURN_RECORDS),
    /**
     * An automation run: the thread ends (thread.completed) as soon as a turn ends completed or
     * failed, so the session is closed and retention can prune it.
     */
    end_after_turn: z.boolean().nullish(),
    /** MCP sessions and the catalog read from the session's MCP servers; absent without any. */
    mcp: McpStateSchema.nullish(),
    /** Absent in states written before compaction was wired in; null when cleared. */
    compaction: EngineCompactionSchema.nullish(),
    /**
     * The history archives of committed compactions still kept, oldest first, by their names
     * after `history/<session>_` (`0042_20261207T101500Z.jsonl`): the newest 10, and any older one
     * whose removal failed (tried again by the next compaction). Apart from `compaction`, which
     * changes every batch, so that only a compaction's batch writes it. Absent or null in states
     * written before it was kept, or when its listing failed: the next compaction lists
     * `history/` once.
     */
    compaction_archives: z.array(z.string().min(1)).nullish(),
    /** Orient phase, handoff, changes and verification (agent-state.ts); absent in older states. */
    agent: AgentStateSchema.nullish(),
  }),
)
export type EngineState = z.infer<typeof EngineStateSchema>

export function parseEngineState(value: unknown): EngineState {
  const result = EngineStateSchema.safeParse(value)
  if (result.success) return result.data
  const versionOk =
    typeof value === 'object' &&
    value !== null &&
    (value as { engine_version?: unknown }).engine_version === ENGINE_STATE_VERSION
  throw new TurnlineError(
    versionOk ? 'corrupt_data' : 'unsupported_version',
    versionOk
      ? `session engine state is invalid: ${z.prettifyError(result.error)}`
      : `session engine state has an unknown version (expected ${ENGINE_STATE_VERSION})`,
  )
}

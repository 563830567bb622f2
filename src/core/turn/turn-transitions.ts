import type { LimitsChange } from '../../contract/api.ts'
import type { EngineState, OpenTurn, PendingCall } from '../../contract/engine-state.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { PendingPermission } from '../../contract/permission-resolution.ts'
import type { PendingPlanApproval } from '../../contract/plan-approval.ts'
import { addUsage, type Usage, ZERO_USAGE } from '../../contract/usage.ts'

/**
 * The turn's state machine: every change of a turn's part of the engine state (the open turn,
 * its counters, usage and cost, how it ended) is one of these named transitions, each a pure
 * function of the state and the event (`turnTransition`). The steps ask `TurnMachine.apply`
 * for them (turn-machine.ts) instead of writing fields.
 *
 * ```
 *            turn_opened                     response_accounted
 *   (none) ──────────────▶ open ◀──────────────────────────────┐
 *                           │ tool_round_requested ─▶ calls pending ─ tools_started ─▶ running
 *                           │      ▲  call_settled / calls_abandoned ◀──────────────────┘
 *                           │      │  call_started: a server-run call, counted as it starts
 *                           │      └── permission_requested ─▶ (left open, awaiting approval)
 *                           │          permission_decided, approval_used
 *                           │      └── call_waiting ─▶ (left open, waiting) ─ wait_dropped
 *                           ├─ turn_left_open: committed open (tools about to run, a pause)
 *                           ├─ plan_proposed: completed, a plan waits for approval
 *                           └─ turn_completed | turn_failed | turn_ended ─▶ (none)
 * ```
 *
 * What each other concept keeps in its own part of the state (compaction's segment and
 * anchors, the agent layer's orientation and changes, MCP sessions) is changed by that concept.
 */
export interface TurnFrame {
  state: EngineState
  open: OpenTurn
}

/** The decision `POST …/permissions` recorded for the call the turn stopped at. */
export type RecordedApproval = NonNullable<OpenTurn['approval']>

export type TurnTransition =
  /** A model response, accounted: the session's and the turn's usage, cost, last text. */
  | {
      type: 'response_accounted'
      usage: Usage
      reasoningTokens?: number | undefined
      /** Tokens of this response the adapter estimated (the provider reported no usage). */
      estimatedTokens?: number | undefined
      costUsd: number | null
      /** Normalized provider stop reason, when it gave one. */
      stopReason?: string | undefined
      text: string
      pricingWarned: boolean
      budgetWarned: boolean
    }
  /** The response asked for tools: one more tool round, its calls pending in order. */
  | { type: 'tool_round_requested'; calls: PendingCall[] }
  /** The first pending call is about to run (committed first: a crash reports them). */
  | { type: 'tools_started' }
  /** A server-run call is about to run: counted under `harness.max_tool_calls`. */
  | { type: 'call_started' }
  /** Every pending call got its result (or none was left to run). */
  | { type: 'tools_settled' }
  /** One call got its result (run, rejected, invalid): no longer pending, no longer waited on. */
  | { type: 'call_settled'; itemId: string }
  /** The pending calls end without running (interrupted, cancelled): their failures recorded. */
  | { type: 'calls_abandoned' }
  | { type: 'permission_requested'; pending: PendingPermission }
  | { type: 'permission_decided'; approval: RecordedApproval }
  | { type: 'approval_used' }
  /** A run outlives the invocation: the turn waits for it. */
  | { type: 'call_waiting'; itemId: string; resume: Record<string, JsonValue> }
  | { type: 'wait_dropped' }
  /** The open turn is kept in the state, to be committed (tools about to run, a pause). */
  | { type: 'turn_left_open' }
  | { type: 'plan_proposed'; approval: PendingPlanApproval }
  | { type: 'turn_completed' }
  | { type: 'turn_failed'; message: string }
  /** Closed without a failure of its own: cancelled, or ended by a limit's thread.completed. */
  | { type: 'turn_ended' }
  /** An item id was handed out (`item_<n>`): the session's item counter moves on. */
  | { type: 'item_numbered' }

/**
 * A change of the session outside a turn's own progress: a plan's approval decided
 * (`POST …/plan-approval`), or new limits a turn request brings (`limits`).
 */
export type SessionTransition =
  | {
      type: 'plan_decided'
      /** The permission mode the decision puts in force. */
      permissionMode: NonNullable<EngineState['permission_mode']>
      /** Executing: the approved plan, kept across a fresh-context handoff. */
      approvedPlan?: string | undefined
      /** A fresh-context handoff: the compaction state goes with the transcript it described. */
      freshContext?: boolean | undefined
    }
  /** Each limit given replaces the session's; the others stay. */
  | { type: 'limits_changed'; limits: LimitsChange }

/** The state after a session transition; `state` is not changed. */
export function sessionTransition(state: EngineState, transition: SessionTransition): EngineState {
  switch (transition.type) {
    case 'plan_decided':
      return {
        ...state,
        plan_approval: null,
        permission_mode: transition.permissionMode,
        ...(transition.approvedPlan !== undefined
          ? { approved_plan: transition.approvedPlan }
          : {}),
        ...(transition.freshContext ? { compaction: null } : {}),
      }
    case 'limits_changed': {
      const { config } = state
      return { ...state, config: { ...config, limits: { ...config.limits, ...transition.limits } } }
    }
  }
}

/** Opens the session's next turn: counted, with nothing pending and no usage yet. */
export function openedTurn(
  state: EngineState,
  call?: { key: string; fingerprint: string },
): TurnFrame {
  const turnCounter = state.turn_counter + 1
  return {
    state: { ...state, turn_counter: turnCounter },
    open: {
      turn_id: `turn-${turnCounter}`,
      pending_calls: [],
      tools_running: false,
      usage: { ...ZERO_USAGE },
      tool_loops: 0,
      ...(call ? { idempotency_key: call.key, request_fingerprint: call.fingerprint } : {}),
    },
  }
}

/**
 * A server-run call started: counted only under `harness.max_tool_calls`, so a session without
 * the limit stores its turns as before.
 */
function callStarted(frame: TurnFrame): TurnFrame {
  const { state, open } = frame
  if (state.config.harness.max_tool_calls === undefined) return frame
  return { state, open: { ...open, tool_calls_run: (open.tool_calls_run ?? 0) + 1 } }
}

/** The frame after `transition`; neither input is changed. */

export function turnTransition(frame: TurnFrame, transition: TurnTransition): TurnFrame {
  const { state, open } = frame
  switch (transition.type) {
    case 'response_accounted':
      return { state: accounted(state, transition), open: turnAccounted(open, transition.usage) }
    case 'tool_round_requested':
      return {
        state,
        open: { ...open, tool_loops: open.tool_loops + 1, pending_calls: transition.calls },
      }
    case 'tools_started':
      return { state, open: { ...open, tools_running: true } }
    case 'call_started':
      return callStarted(frame)
    case 'tools_settled':
      return { state, open: { ...open, tools_running: false } }
    case 'call_settled': {
      const { waiting: _waiting, ...rest } = open
      const pending = open.pending_calls.filter((c) => c.item_id !== transition.itemId)
      return { state, open: { ...rest, pending_calls: pending } }
    }
    case 'calls_abandoned':
      return { state, open: { ...open, pending_calls: [] } }
    case 'permission_requested':
      return {
        state,
        open: { ...open, pending_permission: transition.pending, tools_running: false },
      }
    case 'permission_decided': {
      const { pending_permission: _asked, ...rest } = open
      return { state, open: { ...rest, approval: transition.approval } }
    }
    case 'approval_used': {
      const { approval: _used, ...rest } = open
      return { state, open: rest }
    }
    case 'call_waiting':
      return {
        state,
        open: { ...open, waiting: { item_id: transition.itemId, resume: transition.resume } },
      }
    case 'wait_dropped': {
      const { waiting: _dropped, ...rest } = open
      return { state, open: rest }
    }
    case 'turn_left_open':
      return { state: { ...state, open_turn: open }, open }
    case 'plan_proposed':
      return { state: { ...state, plan_approval: transition.approval }, open }
    case 'turn_completed':
      return { state: { ...state, last_failure: null, open_turn: null }, open }
    case 'turn_failed':
      return { state: { ...state, last_failure: transition.message, open_turn: null }, open }
    case 'turn_ended':
      return { state: { ...state, open_turn: null }, open }
    case 'item_numbered':
      return { state: { ...state, item_counter: state.item_counter + 1 }, open }
  }
}

function accounted(
  state: EngineState,
  response: Extract<TurnTransition, { type: 'response_accounted' }>,
): EngineState {
  return {
    ...state,
    model_requests: state.model_requests + 1,
    usage: addUsage(state.usage, response.usage),
    ...(response.reasoningTokens
      ? { reasoning_tokens: (state.reasoning_tokens ?? 0) + response.reasoningTokens }
      : {}),
    ...(response.estimatedTokens !== undefined
      ? { estimated_tokens: (state.estimated_tokens ?? 0) + response.estimatedTokens }
      : {}),
    cost_usd: response.costUsd,
    pricing_warned: response.pricingWarned,
    budget_warned: response.budgetWarned,
    ...(response.stopReason ? { last_stop_reason: response.stopReason } : {}),
    ...(response.text ? { last_assistant_text: response.text } : {}),
  }
}

function turnAccounted(open: OpenTurn, usage: Usage): OpenTurn {
  return { ...open, usage: addUsage(open.usage, usage) }
}

import * as z from 'zod'
import { PermissionDecisionSchema, PlanApprovalDecisionSchema } from './enums.ts'
import { U64Schema } from './integers.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * The events of what a turn asks a person (VT Code event schema 0.11.0, the union in
 * `thread-event.ts`): a tool call's permission requested and resolved, a plan written and its
 * approval requested and resolved. Field order is the serde declaration order (`type` first).
 */

export const PermissionRequestedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('permission.requested').describe('Always `permission.requested`.'),
    tool_name: z.string().describe('The tool of the call.'),
  }),
)

export const PermissionResolvedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('permission.resolved').describe('Always `permission.resolved`.'),
    tool_name: z.string().describe('The tool of the call.'),
    decision: PermissionDecisionSchema.describe('The decision.'),
    wait_ms: U64Schema.describe('How long the call waited for the answer (ms).'),
  }),
)

export const PlanDeltaEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('plan.delta').describe('Always `plan.delta`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    item_id: z.string().describe('The plan item.'),
    delta: z.string().describe('Text appended to the plan.'),
  }),
)

export const PlanApprovalRequestedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('plan.approval.requested').describe('Always `plan.approval.requested`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    plan_file: z.string().optional().describe('Where the plan was written.'),
  }),
)

export const PlanApprovalResolvedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('plan.approval.resolved').describe('Always `plan.approval.resolved`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    decision: PlanApprovalDecisionSchema.describe('The decision.'),
    automatic: z.boolean().describe('Whether the decision was made without a human (auto-accept).'),
  }),
)

export type PermissionRequestedEvent = z.infer<typeof PermissionRequestedEventSchema>
export type PermissionResolvedEvent = z.infer<typeof PermissionResolvedEventSchema>
export type PlanDeltaEvent = z.infer<typeof PlanDeltaEventSchema>
export type PlanApprovalRequestedEvent = z.infer<typeof PlanApprovalRequestedEventSchema>
export type PlanApprovalResolvedEvent = z.infer<typeof PlanApprovalResolvedEventSchema>

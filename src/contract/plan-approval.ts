import * as z from 'zod'
import { PLAN_APPROVAL_DECISIONS } from './enums.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Plan approval: a planning turn that produced a plan ends `awaiting_approval` with a
 * {@link PendingPlanApproval} kept in the engine state; `POST /v1/sessions/:id/plan-approval`
 * answers it with a {@link PlanApprovalRequest}.
 */

/** The plan waiting for a decision. */
export const PendingPlanApprovalSchema = lazySchema(() =>
  z.object({
    turn_id: z
      .string()
      .min(1)
      .describe('The planning turn that emitted `plan.approval.requested`.'),
    plan: z.string().describe("The plan's markdown (the `<proposed_plan>` body)."),
    plan_file: z.string().optional().describe('Where the plan was written.'),
    task: z
      .string()
      .optional()
      .describe(
        'The original task the plan answers (first user message of the planning conversation).',
      ),
    requested_at: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  }),
)
export type PendingPlanApproval = z.infer<typeof PendingPlanApprovalSchema>

/** Body of `POST /v1/sessions/:id/plan-approval`. Only the known decisions are accepted. */
export const PlanApprovalRequestSchema = lazySchema(() =>
  z
    .strictObject({
      decision: z.enum(PLAN_APPROVAL_DECISIONS).describe('What to do with the plan.'),
      feedback: z
        .string()
        .min(1)
        .max(100_000)
        .optional()
        .describe('With `revise`: what to change, given to the model as the next user message.'),
    })
    .refine((body) => body.feedback === undefined || body.decision === 'revise', {
      message: 'feedback is only accepted with decision "revise"',
      path: ['feedback'],
    }),
)
export type PlanApprovalRequest = z.infer<typeof PlanApprovalRequestSchema>

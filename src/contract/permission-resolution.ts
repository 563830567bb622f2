import * as z from 'zod'
import { PermissionDecisionSchema } from './enums.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Human-in-the-loop tool approval. When the permission policy answers `ask` for a tool call, the
 * turn stops `awaiting_approval` after emitting `permission.requested{tool_name}` and keeps a
 * {@link PendingPermission} in its open turn. `POST /v1/sessions/:id/permissions` answers it with
 * a {@link PermissionResolutionRequest}; the engine records a {@link PermissionResolution} and
 * emits `permission.resolved{tool_name, decision, wait_ms}`. One call waits at a time.
 */

const ToolName = lazySchema(() => z.string().min(1).max(200))
const EpochMs = lazySchema(() => z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER))

/** A tool call waiting for a human decision (kept in the open turn of the engine state). */
export const PendingPermissionSchema = lazySchema(() =>
  z.object({
    tool_name: ToolName.describe('The tool of the waiting call (must match it).'),
    item_id: z.string().min(1).describe('The tool_invocation item id of the waiting call.'),
    tool_call_id: z.string().min(1).describe("The model's raw call id."),
    requested_at: EpochMs.describe(
      'When `permission.requested` was emitted (epoch ms); `wait_ms` is measured from here.',
    ),
  }),
)
export type PendingPermission = z.infer<typeof PendingPermissionSchema>

/**
 * Body of `POST /v1/sessions/:id/permissions`. `tool_name` must name the waiting call's tool.
 * `message` goes with `followup` only: the user's answer to the model instead of an approval.
 */
export const PermissionResolutionRequestSchema = lazySchema(() =>
  z
    .strictObject({
      tool_name: ToolName.describe('The tool of the waiting call (must match it).'),
      decision: PermissionDecisionSchema.describe(
        '`allow`, `deny`, `cancelled`, or `followup` (answer the model with `message` instead).',
      ),
      message: z
        .string()
        .min(1)
        .max(100_000)
        .optional()
        .describe('With `followup`: the answer given to the model.'),
    })
    .refine((body) => body.message === undefined || body.decision === 'followup', {
      message: 'message is only accepted with decision "followup"',
      path: ['message'],
    }),
)
export type PermissionResolutionRequest = z.infer<typeof PermissionResolutionRequestSchema>

/** What was decided, and when: the record behind `permission.resolved`. */
export const PermissionResolutionSchema = lazySchema(() =>
  z.object({
    tool_name: ToolName.describe('The tool of the waiting call (must match it).'),
    decision: PermissionDecisionSchema.describe(
      '`allow`, `deny`, `cancelled`, or `followup` (answer the model with `message` instead).',
    ),
    item_id: z.string().min(1),
    tool_call_id: z.string().min(1),
    requested_at: EpochMs,
    resolved_at: EpochMs,
    wait_ms: EpochMs.describe(
      'Whole milliseconds the call waited (never negative, even if clocks disagree).',
    ),
    message: z.string().optional().describe('With `followup`: the answer given to the model.'),
  }),
)
export type PermissionResolution = z.infer<typeof PermissionResolutionSchema>

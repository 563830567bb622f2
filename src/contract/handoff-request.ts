import * as z from 'zod'
import type { CreateSessionResponse, TurnResponse } from './api.ts'
import { BoundaryItemSchema, type HandoffRequest } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'
import { LimitsSchema } from './limits-config.ts'
import { ModelSettingsSchema } from './model-config.ts'
import { PermissionsSchema } from './permissions-config.ts'

/**
 * `POST /v1/sessions/:id/handoff`: what the caller adds to the HandoffRequest the service
 * derives from the session (fields given replace the derived ones; list items are added), and
 * whether to start the next agent's session with it and end this one.
 */
const Item = lazySchema(() => z.string().min(1).max(4000))
const Items = lazySchema(() => z.array(Item).max(200))

export const HandoffRouteRequestSchema = lazySchema(() =>
  z.strictObject({
    target_agent: z
      .string()
      .min(1)
      .max(64)
      .default('next')
      .describe('Who the handoff is for (default `next`).'),
    state_summary: z
      .string()
      .min(1)
      .max(20_000)
      .optional()
      .describe('Replaces the derived summary of what was done and what remains.'),
    task_context: z
      .string()
      .min(1)
      .max(100_000)
      .optional()
      .describe("Replaces the derived task (the session's first message)."),
    boundary_status: z
      .array(BoundaryItemSchema)
      .max(200)
      .optional()
      .describe('Where each feature stands (added to the derived ones).'),
    open_decisions: Items.optional().describe('Decisions still to be made (added).'),
    known_issues: Items.optional().describe('Known problems (added).'),
    next_actions: Items.optional().describe('What to do next (added).'),
    context_files: Items.optional().describe('Files the next agent should read first (added).'),
    test_command: z
      .string()
      .min(1)
      .max(4000)
      .optional()
      .describe(
        'The exact command that ran the tests (else `harness.test_command`, else the pattern).',
      ),
    start: z
      .boolean()
      .default(false)
      .describe(
        "Start the next agent's session with this handoff (it shares the sandbox workspace).",
      ),
    next_session: z
      .strictObject({
        instructions: z
          .string()
          .max(200_000)
          .optional()
          .describe("The next session's system instructions."),
        model: z
          .union([z.string().min(1).max(200), ModelSettingsSchema])
          .optional()
          .describe("The next session's model (name or settings)."),
        permissions: PermissionsSchema.optional().describe("The next session's permission policy."),
        limits: LimitsSchema.optional().describe("The next session's limits."),
        metadata: z
          .record(z.string().max(128), z.string().max(1024))
          .optional()
          .describe("The next session's labels."),
      })
      .optional()
      .describe("Settings of the next session that differ from this one's."),
    end_source: z
      .boolean()
      .default(false)
      .describe(
        'End this session: `thread.completed{error_during_execution, handed_off}` (VT Code HandedOff).',
      ),
  }),
)
export type HandoffRouteRequest = z.infer<typeof HandoffRouteRequestSchema>
export type HandoffRouteInput = z.input<typeof HandoffRouteRequestSchema>

export interface HandoffResponse {
  handoff: HandoffRequest
  /** The handoff as the next agent reads it (`## HANDOFF FROM PREVIOUS AGENT` …). */
  prompt: string
  /** Where it was stored for the workspace's next agent. */
  path: string
  /** The next agent's session, when `start` was set. */
  session?: CreateSessionResponse & { handed_off_from: string; duplicate?: boolean }
  /** The source's terminal turn, when `end_source` was set. */
  source_completion?: TurnResponse
  warnings?: string[]
}

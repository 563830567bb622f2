import * as z from 'zod'
import type { CreateSessionResponse, TurnResponse } from './api.ts'
import { BoundaryItemSchema, type HandoffRequest } from './handoff.ts'
import { LimitsSchema, ModelSettingsSchema, PermissionsSchema } from './session-config.ts'

/**
 * `POST /v1/sessions/:id/handoff`: what the caller adds to the HandoffRequest the service
 * derives from the session (fields given replace the derived ones; list items are added), and
 * whether to start the next agent's session with it and end this one.
 */
const Item = z.string().min(1).max(4000)
const Items = z.array(Item).max(200)

export const HandoffRouteRequestSchema = z.strictObject({
  target_agent: z.string().min(1).max(64).default('next'),
  state_summary: z.string().min(1).max(20_000).optional(),
  task_context: z.string().min(1).max(100_000).optional(),
  boundary_status: z.array(BoundaryItemSchema).max(200).optional(),
  open_decisions: Items.optional(),
  known_issues: Items.optional(),
  next_actions: Items.optional(),
  context_files: Items.optional(),
  /** The exact command that ran the tests (else `harness.test_command`, else the pattern). */
  test_command: z.string().min(1).max(4000).optional(),
  /** Start the next agent's session with this handoff (it shares the sandbox workspace). */
  start: z.boolean().default(false),
  /** Settings of the next session that differ from this one's. */
  next_session: z
    .strictObject({
      instructions: z.string().max(200_000).optional(),
      model: z.union([z.string().min(1).max(200), ModelSettingsSchema]).optional(),
      permissions: PermissionsSchema.optional(),
      limits: LimitsSchema.optional(),
      metadata: z.record(z.string().max(128), z.string().max(1024)).optional(),
    })
    .optional(),
  /** End this session: `thread.completed{error_during_execution, handed_off}` (VT Code HandedOff). */
  end_source: z.boolean().default(false),
})
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

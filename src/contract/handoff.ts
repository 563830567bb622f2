import * as z from 'zod'

/**
 * VT Code `HandoffRequest`: what one agent hands the next so it can orient without re-exploring.
 * Rendered as the `## HANDOFF FROM PREVIOUS AGENT` prompt (src/core/plan/handoff-prompt.ts).
 */

export const BOUNDARY_STATUSES = ['done', 'in_progress', 'not_started', 'blocked'] as const
export const BoundaryStatusSchema = z.enum(BOUNDARY_STATUSES)
export type BoundaryStatus = z.infer<typeof BoundaryStatusSchema>

export const BoundaryItemSchema = z.object({
  feature: z.string(),
  status: BoundaryStatusSchema,
  notes: z.string().optional(),
})
export type BoundaryItem = z.infer<typeof BoundaryItemSchema>

export const HandoffRequestSchema = z.object({
  target_agent: z.string(),
  /** What was accomplished, what remains. */
  state_summary: z.string(),
  modified_files: z.array(z.string()).default([]),
  open_decisions: z.array(z.string()).default([]),
  /** The original task, carried through. */
  task_context: z.string(),
  context_files: z.array(z.string()).default([]),
  /** Last test run outcome; absent when no tests ran. */
  test_results: z.string().optional(),
  boundary_status: z.array(BoundaryItemSchema).default([]),
  known_issues: z.array(z.string()).default([]),
  next_actions: z.array(z.string()).default([]),
})
export type HandoffRequest = z.infer<typeof HandoffRequestSchema>
export type HandoffRequestInput = z.input<typeof HandoffRequestSchema>

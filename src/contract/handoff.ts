import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * VT Code `HandoffRequest`: what one agent hands the next so it can orient without re-exploring.
 * Rendered as the `## HANDOFF FROM PREVIOUS AGENT` prompt (src/core/plan/handoff-prompt.ts).
 */

export const BOUNDARY_STATUSES = ['done', 'in_progress', 'not_started', 'blocked'] as const
export const BoundaryStatusSchema = lazySchema(() => z.enum(BOUNDARY_STATUSES))
export type BoundaryStatus = z.infer<typeof BoundaryStatusSchema>

export const BoundaryItemSchema = lazySchema(() =>
  z.object({
    feature: z.string().describe('A feature or part of the task.'),
    status: BoundaryStatusSchema.describe('`done`, `in_progress`, `not_started` or `blocked`.'),
    notes: z.string().optional().describe('Notes on it.'),
  }),
)
export type BoundaryItem = z.infer<typeof BoundaryItemSchema>

export const HandoffRequestSchema = lazySchema(() =>
  z.object({
    target_agent: z.string().describe('Who the handoff is for.'),
    state_summary: z.string().describe('What was accomplished, what remains.'),
    modified_files: z.array(z.string()).default([]).describe('Files the session changed.'),
    open_decisions: z.array(z.string()).default([]).describe('Decisions still to be made.'),
    task_context: z.string().describe('The original task, carried through.'),
    context_files: z
      .array(z.string())
      .default([])
      .describe('Files the next agent should read first.'),
    test_results: z
      .string()
      .optional()
      .describe('Last test run outcome; absent when no tests ran.'),
    boundary_status: z.array(BoundaryItemSchema).default([]).describe('Where each feature stands.'),
    known_issues: z.array(z.string()).default([]).describe('Known problems.'),
    next_actions: z.array(z.string()).default([]).describe('What to do next.'),
  }),
)
export type HandoffRequest = z.infer<typeof HandoffRequestSchema>
export type HandoffRequestInput = z.input<typeof HandoffRequestSchema>

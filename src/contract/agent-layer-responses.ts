import * as z from 'zod'
import { FrozenOrientationSchema, OrientReasonSchema } from './agent-state.ts'
import { ArtifactKindSchema } from './artifacts.ts'
import { HandoffRequestSchema } from './handoff.ts'
import { LoopRunStateSchema, LoopStepRecordSchema } from './loop-state.ts'
import {
  BudgetReportSchema,
  CreateSessionResponseSchema,
  TurnResponseSchema,
} from './wire-responses.ts'

/**
 * Response bodies of the agent-layer routes (docs/agent-layer.md) as a client reads them; the
 * server's types they describe are in `artifacts.ts`, `orientation-view.ts`,
 * `handoff-request.ts`, `verification.ts` and `loop-state.ts`.
 */

/** Where an artifact is and whether it exists. */
export const ArtifactEntrySchema = z.object({
  kind: ArtifactKindSchema,
  path: z.string(),
  exists: z.boolean(),
  size: z.number().int().min(0).optional(),
})

/** `GET /v1/workspaces/:workspace/artifacts`. */
export const ArtifactListSchema = z.object({
  workspace: z.string(),
  artifacts: z.array(ArtifactEntrySchema),
})

/** One artifact (`GET`, `PUT`, `POST` of `…/artifacts/:kind`); `etag` goes back as If-Match. */
export const ArtifactViewSchema = z.object({
  kind: ArtifactKindSchema,
  path: z.string(),
  etag: z.string(),
  content: z.string(),
  /** Parsed form: the ledger, the handoff, or the memory entries. */
  value: z.unknown().optional(),
  summary: z.string().optional(),
  warnings: z.array(z.string()).optional(),
})

/** `GET /v1/sessions/:id/orientation`. */
export const OrientationViewSchema = z.object({
  session_id: z.string(),
  orientation: FrozenOrientationSchema.nullable(),
  pending: OrientReasonSchema.optional(),
  preview: FrozenOrientationSchema.optional(),
  warnings: z.array(z.string()).optional(),
})

/** `POST /v1/sessions/:id/handoff`. */
export const HandoffResponseSchema = z.object({
  handoff: HandoffRequestSchema,
  prompt: z.string(),
  path: z.string(),
  session: CreateSessionResponseSchema.extend({
    handed_off_from: z.string(),
    duplicate: z.boolean().optional(),
  }).optional(),
  source_completion: TurnResponseSchema.optional(),
  warnings: z.array(z.string()).optional(),
})

export const VerificationResultSchema = z.object({
  id: z.string(),
  verdict: z.enum(['approved', 'rejected']),
  issues: z.array(z.string()),
  reasoning: z.string(),
  paths: z.array(z.string()),
  turn_id: z.string().optional(),
  verifier_session: z.string().optional(),
})

/** `POST /v1/sessions/:id/verify`: the proposer's committed events and the verdict. */
export const VerifyResponseSchema = TurnResponseSchema.extend({
  verification: VerificationResultSchema,
})

/** `POST /v1/loops`, `GET /v1/loops/:id`: the stored state and its budget report. */
export const LoopViewSchema = LoopRunStateSchema.extend({ budget_report: BudgetReportSchema })

/** `POST /v1/loops/:id/step`. */
export const LoopStepResponseSchema = z.object({
  loop: LoopViewSchema,
  step: LoopStepRecordSchema.optional(),
  waiting: z.object({ session_id: z.string(), status: z.string() }).optional(),
})

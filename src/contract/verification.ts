import * as z from 'zod'
import type { TurnResponse } from './api.ts'
import { lazySchema } from './lazy-schema.ts'
import { ModelSettingsSchema } from './model-config.ts'

/**
 * Propose/verify separation (VT Code `verify_proposed_change`): `POST /v1/sessions/:id/verify`
 * hands a proposed change — the files of a turn's `file_change` items, or paths the caller
 * names — to a verifier sub-agent that shares no context with the proposer and has read-only
 * tools only. Its verdict is a `harness` item (`verification_passed` / `verification_failed`)
 * in the proposer's stream and gates the change.
 */
export const VerifyRequestSchema = lazySchema(() =>
  z.strictObject({
    turn_id: z
      .string()
      .regex(/^turn-\d+$/)
      .optional()
      .describe(
        'The turn whose file changes are proposed (default: the newest turn that changed files).',
      ),
    paths: z
      .array(z.string().min(1).max(1000))
      .min(1)
      .max(100)
      .optional()
      .describe("Instead of a turn's changes: the affected files, relative to the workspace."),
    description: z
      .string()
      .min(1)
      .max(20_000)
      .optional()
      .describe('What the change is meant to do (the diff description).'),
    model: z
      .union([z.string().min(1).max(200), ModelSettingsSchema])
      .optional()
      .describe("The verifier's model (default: the proposer's)."),
    instructions: z
      .string()
      .min(1)
      .max(20_000)
      .optional()
      .describe("Added to the verifier's instructions (project conventions to check)."),
  }),
)
export type VerifyRequest = z.infer<typeof VerifyRequestSchema>

export interface VerificationResult {
  id: string
  verdict: 'approved' | 'rejected'
  /** Concrete issues the verifier named (empty when approved). */
  issues: string[]
  /** The verifier's reasoning (its final answer, cut). */
  reasoning: string
  paths: string[]
  turn_id?: string
  /** The verifier's own session (its events show what it read and tried). */
  verifier_session?: string
}

/** The proposer's committed events (the harness items) and the verdict. */
export type VerifyResponse = TurnResponse & { verification: VerificationResult }

import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * `POST /v1/sessions/:id/compact`: a manual compaction. It always summarizes (even a short
 * transcript); `instructions` replace the default summary instruction.
 */
export const CompactRequestSchema = lazySchema(() =>
  z.strictObject({
    instructions: z
      .string()
      .min(1)
      .max(20_000)
      .optional()
      .describe('Replaces the default summary instruction.'),
  }),
)
export type CompactRequest = z.infer<typeof CompactRequestSchema>

import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * A request segment (VT Code's `SessionRequestEnvelope`): the frozen prefix every model request
 * of the segment shares — system prompt, instruction digest and the ordered tool catalog — plus
 * the model, provider and mode it was opened for. Ordinary turns only append messages; a change
 * of any of these, or a compaction, opens the next segment. Kept in the engine state.
 */
export const SEGMENT_ID_PATTERN = /^segment-\d{8,}$/
/** 16 lowercase hex characters: a truncated SHA-256. */
const Hash16 = lazySchema(() => z.string().regex(/^[0-9a-f]{16}$/))

export const RequestSegmentSchema = lazySchema(() =>
  z.object({
    /** `segment-%08d`. */
    id: z.string().regex(SEGMENT_ID_PATTERN),
    sequence: z.number().int().nonnegative(),
    /** SHA-256 of the system prompt bytes + 0xFF, first 16 hex characters. */
    prefix_hash: Hash16,
    /** Same over the compact JSON of the ordered tool definitions; absent when there are no tools. */
    catalog_hash: Hash16.optional(),
    /** Same over the session instructions alone. */
    instruction_digest: Hash16,
    /** Same over the frozen `[Orientation Context]` section; absent without one. */
    orientation_digest: Hash16.optional(),
    model: z.string(),
    provider: z.string(),
    mode: z.string(),
  }),
)
export type RequestSegment = z.infer<typeof RequestSegmentSchema>

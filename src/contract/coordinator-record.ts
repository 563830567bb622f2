import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * An idempotency record as the Redis coordinators store it at `idem:<tenant>:<key>` (format
 * version 1): JSON of the first outcome of a turn, returned verbatim on retries.
 */
export const StoredIdempotencyRecordSchema = lazySchema(() =>
  z.object({
    v: z.literal(1),
    sessionId: z.string(),
    turnId: z.string(),
    batch: z.number().int().nonnegative(),
    response: z.string(),
  }),
)

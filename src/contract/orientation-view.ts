import * as z from 'zod'
import type { FrozenOrientation, OrientReason } from './agent-state.ts'
import { lazySchema } from './lazy-schema.ts'

/** `GET /v1/sessions/:id/orientation`. */
export interface OrientationView {
  session_id: string
  /** The section the system prompt carries now; null when none was frozen yet. */
  orientation: FrozenOrientation | null
  /** The orient phase waits for the next new turn (and this is why). */
  pending?: OrientReason
  /** With `?preview=1`: what an orient phase would build now (not frozen). */
  preview?: FrozenOrientation
  /** Artifacts that could not be read while previewing. */
  warnings?: string[]
}

export const OrientationQuerySchema = lazySchema(() =>
  z.strictObject({
    preview: z
      .enum(['0', '1', 'true', 'false'])
      .optional()
      .describe('`1`/`true`: also build the orientation a new orient phase would freeze now.'),
  }),
)

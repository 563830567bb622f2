import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { HandoffRequestSchema } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * The handoff waiting for the next agent of a workspace: `.vtcode/tasks/current_handoff.json`,
 * written by `POST /v1/sessions/:id/handoff` (or uploaded), read by the orient phase.
 */
export const HANDOFF_DOCUMENT_VERSION = 1

export const HandoffDocumentSchema = lazySchema(() =>
  z.object({
    schema_version: z.literal(HANDOFF_DOCUMENT_VERSION),
    /** The session that produced it; absent when a caller uploaded it. */
    from_session: z.string().optional(),
    /** RFC 3339. */
    created_at: z.string(),
    handoff: HandoffRequestSchema,
  }),
)
export type HandoffDocument = z.infer<typeof HandoffDocumentSchema>

export function parseHandoffDocument(text: string): HandoffDocument {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new TurnlineError('corrupt_data', 'current_handoff.json is not valid JSON')
  }
  const result = HandoffDocumentSchema.safeParse(value)
  if (result.success) return result.data
  const version = (value as { schema_version?: unknown } | null)?.schema_version
  throw new TurnlineError(
    version === HANDOFF_DOCUMENT_VERSION ? 'corrupt_data' : 'unsupported_version',
    version === HANDOFF_DOCUMENT_VERSION
      ? `current_handoff.json is invalid: ${z.prettifyError(result.error)}`
      : `current_handoff.json has an unknown schema_version (expected ${HANDOFF_DOCUMENT_VERSION})`,
  )
}

export function serializeHandoffDocument(document: HandoffDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`
}

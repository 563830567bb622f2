import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * `<prefix>/<tenant>/.turnline/sessions/<session_id>.json`: which workspace folder holds a
 * session, so the API can address sessions by id alone. Written create-only, never changed.
 */
export const SESSION_POINTER_FORMAT = 'turnline.session-pointer'

export const SessionPointerSchema = lazySchema(() =>
  z.strictObject({
    format: z.literal(SESSION_POINTER_FORMAT),
    version: z.literal(1),
    session_id: z.string().min(1),
    workspace: z.string().min(1),
    created_at: z.string().min(1),
  }),
)
export type SessionPointer = z.infer<typeof SessionPointerSchema>

export function parseSessionPointer(bytes: Uint8Array): SessionPointer {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (cause) {
    throw new TurnlineError('corrupt_data', 'session pointer is not valid JSON', { cause })
  }
  const version = (value as { version?: unknown } | null)?.version
  if (version !== undefined && version !== 1) {
    throw new TurnlineError(
      'unsupported_version',
      `session pointer version ${String(version)} is not supported`,
    )
  }
  const result = SessionPointerSchema.safeParse(value)
  if (!result.success) {
    throw new TurnlineError(
      'corrupt_data',
      `session pointer is invalid: ${z.prettifyError(result.error)}`,
    )
  }
  return result.data
}

export function serializeSessionPointer(pointer: SessionPointer): string {
  return JSON.stringify(SessionPointerSchema.parse(pointer))
}

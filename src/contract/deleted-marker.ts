import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { documentCodec, Rfc3339Schema } from './stored-document.ts'

/**
 * `log/<n:010d>.json` of a deleted session, at the batch number after its last batch: written
 * create-only by `DELETE /v1/sessions/:id` before it erases anything, and left in place. A turn
 * that lost its lease (a paused process) and resumes after the delete commits its next batch
 * create-only at exactly that key, so its commit is refused there and it writes nothing. It
 * holds no data of the session; no listing names it.
 */
export const DELETED_MARKER_FORMAT = 'turnline.deleted'
export const DELETED_MARKER_VERSION = 1

export const DeletedMarkerSchema = lazySchema(() =>
  z.object({
    format: z.literal(DELETED_MARKER_FORMAT),
    version: z.literal(DELETED_MARKER_VERSION),
    deleted_at: Rfc3339Schema,
  }),
)
export type DeletedMarker = z.infer<typeof DeletedMarkerSchema>

const codec = documentCodec(DeletedMarkerSchema, {
  format: DELETED_MARKER_FORMAT,
  version: DELETED_MARKER_VERSION,
  what: 'deleted-session marker',
})

/** Reads a marker. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export const parseDeletedMarker: (input: Uint8Array | string) => DeletedMarker = codec.parse

export const serializeDeletedMarker: (marker: DeletedMarker) => string = codec.serialize

/** True when the stored object is a deleted-session marker (a batch, or anything else: false). */
export function isDeletedMarker(input: Uint8Array): boolean {
  try {
    parseDeletedMarker(input)
    return true
  } catch {
    return false
  }
}

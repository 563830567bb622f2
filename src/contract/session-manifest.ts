import * as z from 'zod'
import { corruptData } from './corrupt-data.ts'
import { encodeOrderedObject } from './json-value.ts'
import { lazySchema } from './lazy-schema.ts'
import {
  CounterSchema,
  keysOf,
  Rfc3339Schema,
  readDocument,
  requireVersion,
  validateDocument,
  validateForWrite,
} from './stored-document.ts'

/**
 * `manifest.json` of a session: VT Code's SessionManifest (its fields first, same names and
 * meaning, so VT Code can read it) followed by Turnline's fields describing the commit log and
 * the rolled-up `events.jsonl`. Compact JSON.
 */

/** VT Code store layout version (`SESSION_STORE_SCHEMA_VERSION`). */
export const SESSION_STORE_SCHEMA_VERSION = 1
/**
 * Version of Turnline's manifest fields: 1 when events.jsonl is one object (rewritten, or
 * appended to), 2 when the rolled events are create-only parts (`event_parts`: a store that
 * cannot append). Both are read; a reader that knows only 1 refuses a 2 rather than take the
 * missing `events.jsonl` for a rollup in progress.
 */
export const MANIFEST_FORMAT_VERSION = 1
export const MANIFEST_PARTS_FORMAT_VERSION = 2
/** The most parts a manifest lists (store/event-parts.ts merges the smallest beyond it). */
export const MAX_EVENT_PARTS = 256

export const SessionStatusSchema = lazySchema(() => z.enum(['active', 'completed']))
export type SessionStatus = z.infer<typeof SessionStatusSchema>

/** The fields VT Code itself reads and writes, in its declaration order. */
export const VtcodeSessionManifestSchema = lazySchema(() =>
  z.object({
    session_id: z.string().min(1),
    schema_version: z.literal(SESSION_STORE_SCHEMA_VERSION),
    created_at: Rfc3339Schema,
    /** Updated on every commit. */
    updated_at: Rfc3339Schema,
    /** Completed turns (turn.completed / turn.failed seen). */
    turn_count: CounterSchema,
    /** Events retained in events.jsonl. */
    event_count: CounterSchema,
    /** `active` from thread.started / turn.started; `completed` only after thread.completed. */
    status: SessionStatusSchema,
  }),
)
export type VtcodeSessionManifest = z.infer<typeof VtcodeSessionManifestSchema>

export const SessionManifestSchema = lazySchema(() =>
  z.object({
    ...VtcodeSessionManifestSchema.shape,
    format_version: z.union([
      z.literal(MANIFEST_FORMAT_VERSION),
      z.literal(MANIFEST_PARTS_FORMAT_VERSION),
    ]),
    thread_id: z.string().min(1),
    tenant: z.string().min(1),
    workspace: z.string().min(1),
    /** Newest committed batch (`log/<n>.json`) this manifest knows of. */
    last_batch: CounterSchema,
    /** Seq of the newest committed event; -1 when none. */
    last_seq: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
    /** Events rolled into events.jsonl: the seq that follows its last line. */
    rolled_through: CounterSchema,
    /** Seq of the first line still in events.jsonl (the event cap cuts old turns); 0 normally. */
    rolled_head_seq: CounterSchema,
    /** Newest batch rolled into events.jsonl; -1 when none. */
    rolled_batch: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
    /** Etag of the events.jsonl this manifest describes (a store that rewrites it: S3). */
    rollup_etag: z.string().optional(),
    /**
     * Bytes of events.jsonl that hold the events up to `rolled_through` (a store that appends to
     * it: the fs store). The file may have grown since by appends; these bytes stay as they are.
     */
    events_bytes: CounterSchema.optional(),
    /**
     * Format 2 only: the create-only parts (`events/<first>-<end>.jsonl`) that hold the events
     * [rolled_head_seq, rolled_through), in order, each as [first seq, end seq); the first may
     * start before the head (its lines before it are not read).
     */
    event_parts: z
      .array(z.tuple([CounterSchema, CounterSchema]))
      .max(MAX_EVENT_PARTS)
      .optional(),
    /** Batch of the newest checkpoint (`state/<n>.json`). */
    checkpoint_batch: CounterSchema.optional(),
    /**
     * The session's title: its first recorded turn input, trimmed (turn-input-record.ts). Optional
     * and added without a version bump: a reader that predates it ignores it.
     */
    title: z.string().min(1).optional(),
    /**
     * What the session waits for between calls as of `last_batch`, from the engine state (a turn
     * left open, waiting on a command or on an approval; a plan waiting): what a listing shows
     * (`activity_state`) without reading the state. Optional and added without a version bump, as
     * `title`; absent when nothing waits.
     */
    between_calls: z
      .object({
        turn: z.enum(['open', 'waiting', 'awaiting_approval']).optional(),
        plan: z.literal(true).optional(),
      })
      .optional(),
  }),
)
export type SessionManifest = z.infer<typeof SessionManifestSchema>

const WHAT = 'session manifest'
const KEYS = keysOf(SessionManifestSchema)

/** Reads manifest.json. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export function parseSessionManifest(input: Uint8Array | string): SessionManifest {
  const doc = readDocument(input, WHAT)
  requireVersion(doc, 'schema_version', [SESSION_STORE_SCHEMA_VERSION], WHAT)
  requireVersion(
    doc,
    'format_version',
    [MANIFEST_FORMAT_VERSION, MANIFEST_PARTS_FORMAT_VERSION],
    WHAT,
  )
  return checkParts(validateDocument(SessionManifestSchema, doc, WHAT))
}

/** Compact JSON of a manifest, VT Code's fields first. */
export function serializeSessionManifest(manifest: SessionManifest): string {
  return encodeOrderedObject(
    checkParts(validateForWrite(SessionManifestSchema, manifest, WHAT)),
    KEYS,
  )
}

/** Parts come with format 2 only, contiguous, ending at `rolled_through`, covering the head. */
function checkParts(manifest: SessionManifest): SessionManifest {
  const parts = manifest.event_parts
  const v2 = manifest.format_version === MANIFEST_PARTS_FORMAT_VERSION
  if (!v2 && parts === undefined) return manifest
  const ok =
    v2 &&
    parts !== undefined &&
    manifest.rollup_etag === undefined &&
    manifest.events_bytes === undefined &&
    partsCover(parts, manifest.rolled_head_seq, manifest.rolled_through)
  if (!ok) {
    throw corruptData(
      WHAT,
      'event_parts must come with format_version 2 and cover rolled_head_seq..rolled_through',
      { reason: 'invalid_shape' },
    )
  }
  return manifest
}

function partsCover(parts: readonly (readonly [number, number])[], head: number, end: number) {
  if (parts.length === 0) return head === end
  const first = parts[0] as readonly [number, number]
  if (first[0] > head || (head < end && first[1] <= head)) return false
  return parts.every(([from, to], i) => from < to && (i === 0 || parts[i - 1]?.[1] === from))
    ? parts[parts.length - 1]?.[1] === end
    : false
}

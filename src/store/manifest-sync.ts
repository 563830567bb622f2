import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import {
  MANIFEST_FORMAT_VERSION,
  MANIFEST_PARTS_FORMAT_VERSION,
  parseSessionManifest,
  serializeSessionManifest,
} from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { betweenCalls } from './between-calls.ts'
import { toBytes } from './json-bytes.ts'
import type { RollupState } from './rollup.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'

const MAX_ATTEMPTS = 4

/** The manifest that describes `snapshot` with the given rollup. */
export function manifestOf(snapshot: SessionSnapshot, rollup: RollupState): SessionManifest {
  return {
    session_id: snapshot.ref.sessionId,
    schema_version: 1,
    created_at: snapshot.createdAt,
    updated_at: snapshot.updatedAt,
    turn_count: snapshot.turnCount,
    event_count: snapshot.nextSeq - rollup.headSeq,
    status: snapshot.status,
    format_version: rollup.parts ? MANIFEST_PARTS_FORMAT_VERSION : MANIFEST_FORMAT_VERSION,
    thread_id: snapshot.threadId,
    tenant: snapshot.ref.tenant,
    workspace: snapshot.ref.workspace,
    last_batch: snapshot.lastBatch,
    last_seq: snapshot.nextSeq - 1,
    rolled_through: rollup.rolledThrough,
    rolled_head_seq: rollup.headSeq,
    rolled_batch: rollup.rolledBatch,
    ...(rollup.etag !== undefined ? { rollup_etag: rollup.etag } : {}),
    ...(rollup.bytes !== undefined ? { events_bytes: rollup.bytes } : {}),
    ...(rollup.parts ? { event_parts: rollup.parts.map(([first, end]) => [first, end]) } : {}),
    ...(snapshot.checkpointBatch !== undefined
      ? { checkpoint_batch: snapshot.checkpointBatch }
      : {}),
    ...(snapshot.title === undefined ? {} : { title: snapshot.title }),
    ...betweenCalls(snapshot.state),
  }
}

export function rollupStateOf(manifest: SessionManifest | undefined): RollupState {
  if (!manifest) return { rolledThrough: 0, headSeq: 0, rolledBatch: -1 }
  return {
    rolledThrough: manifest.rolled_through,
    headSeq: manifest.rolled_head_seq,
    rolledBatch: manifest.rolled_batch,
    ...(manifest.rollup_etag !== undefined ? { etag: manifest.rollup_etag } : {}),
    ...(manifest.events_bytes !== undefined ? { bytes: manifest.events_bytes } : {}),
    ...(manifest.event_parts ? { parts: manifest.event_parts } : {}),
  }
}

/**
 * Writes `next` with compare-and-swap, never letting the manifest regress: when the stored one
 * already describes a later batch (or the same batch with a newer rollup), it is kept.
 * Returns the manifest in force afterwards and its etag.
 */
export async function syncManifest(
  store: ObjectStore,
  keys: SessionKeys,
  next: SessionManifest,
  known: { value: SessionManifest; etag: string } | undefined,
): Promise<{ value: SessionManifest; etag: string }> {
  let current = known
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (current && !advances(next, current.value)) return current
    try {
      const { etag } = await store.put(
        keys.manifest,
        toBytes(serializeSessionManifest(next)),
        current
          ? { ifMatch: current.etag, contentType: 'application/json' }
          : { ifNoneMatch: '*', contentType: 'application/json' },
      )
      return { value: next, etag }
    } catch (error) {
      if (!isTurnlineError(error, 'conflict', 'not_found')) throw error
      const stored = await store.get(keys.manifest)
      current = stored ? { value: parseSessionManifest(stored.body), etag: stored.etag } : undefined
    }
  }
  throw new TurnlineError(
    'conflict',
    `the session manifest kept changing over ${MAX_ATTEMPTS} attempts`,
  )
}

function advances(next: SessionManifest, current: SessionManifest): boolean {
  if (next.last_batch !== current.last_batch) return next.last_batch > current.last_batch
  return (
    next.rolled_through > current.rolled_through ||
    (next.checkpoint_batch ?? -1) > (current.checkpoint_batch ?? -1) ||
    (next.rolled_through === current.rolled_through && next.rollup_etag !== current.rollup_etag)
  )
}

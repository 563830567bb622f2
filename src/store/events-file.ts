import { isTurnlineError } from '../contract/errors.ts'
import {
  serializeTurnIndex,
  serializeTurnIndexAppend,
  TURN_INDEX_TAIL,
} from '../contract/turn-index.ts'
import { recoverEventsFile } from './events-file-recovery.ts'
import { extendShape, type FileShape } from './events-file-shape.ts'
import type {
  AppendingStore,
  EventsFile,
  EventsFileContext,
  KnownIndex,
} from './events-file-state.ts'
import { toBytes } from './json-bytes.ts'
import type { KnownBatch } from './rollup.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'

/**
 * events.jsonl on a store that appends (`ObjectStore.append`: the fs store). After every commit
 * the batch's canonical lines are appended — the history is never rewritten — and, when the
 * batch completes a turn, its entry is appended to index/turns.json from what this process knows
 * of the file. A writer that does not know the file as it is (a
 * new process, a crash, another writer) reads it once and brings it up to date
 * (events-file-recovery.ts). VT Code's cap applies: past `maxRetained` events the oldest
 * completed turns are cut, down to `retainedAfterCut`, which is the one rewrite.
 */

/**
 * Appends a committed batch's lines (its `snapshot` is the one after it). When this process
 * does not know the file to end right before the batch, or an append finds it otherwise, the
 * file is read and brought up to `snapshot` instead. Throws when it cannot be (the commit stands:
 * the next writer repairs the file).
 *
 * The batch is the durable record; the file is derived from it and checked against it by every
 * writer that does not know it (events-file-recovery.ts), so the append is synced only when
 * `durable` (the commit will write a manifest, whose `events_bytes` vouch for the file); other
 * lines are synced by the next durable append or by `syncEventsFile`. The turn index is never
 * synced on its own: a writer that reads the file rebuilds it from the file's lines.
 */
export async function appendCommitted(
  ctx: EventsFileContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  known: KnownBatch,
  durable = true,
): Promise<EventsFile> {
  const file = ctx.cache.eventsFile(keys.root)
  const { batch, lines } = known
  const fits = file !== undefined && file.through - file.headSeq + lines.length <= ctx.maxRetained
  if (file && fits && file.batch === batch.batch - 1 && file.through === batch.first_seq) {
    try {
      return await appendKnown(ctx, keys, file, known, durable)
    } catch (error) {
      ctx.cache.setEventsFile(keys.root, undefined)
      if (!isTurnlineError(error, 'conflict', 'not_found')) throw error
    }
  }
  return currentEventsFile(ctx, keys, snapshot, { reread: true })
}

/**
 * The file as of `snapshot`: what this process knows when it is current, else read and brought
 * up to date (`reread` forces the read).
 */
export async function currentEventsFile(
  ctx: EventsFileContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  options: { reread?: boolean } = {},
): Promise<EventsFile> {
  const file = ctx.cache.eventsFile(keys.root)
  if (!options.reread && file?.batch === snapshot.lastBatch && file.through === snapshot.nextSeq) {
    return file
  }
  ctx.cache.setEventsFile(keys.root, undefined)
  const recovered = await recoverEventsFile(ctx, keys, snapshot)
  ctx.cache.setEventsFile(keys.root, recovered)
  ctx.cache.forgetBatchesThrough(keys.root, recovered.batch - 1)
  return recovered
}

/**
 * Makes every line this process appended to the file durable (an append of no bytes, synced)
 * before a manifest vouches for them; the file as it is then.
 */
export async function syncEventsFile(
  ctx: EventsFileContext,
  keys: SessionKeys,
  file: EventsFile,
): Promise<EventsFile> {
  if (!file.unsynced) return file
  const synced = await ctx.objects.append(keys.events, new Uint8Array(0), {
    at: file.size,
    ifSize: file.size,
    ...(file.version === undefined ? {} : { ifVersion: file.version }),
  })
  const next: EventsFile = { ...file, version: synced.version, unsynced: false }
  if (ctx.cache.eventsFile(keys.root) === file) ctx.cache.setEventsFile(keys.root, next)
  return next
}

async function appendKnown(
  ctx: EventsFileContext,
  keys: SessionKeys,
  file: EventsFile,
  known: KnownBatch,
  durable: boolean,
): Promise<EventsFile> {
  const { batch, lines } = known
  const shape = extendShape(file.shape, lines, batch.first_seq, () => batch.committed_at)
  // The index is written from the offsets this process knows, alongside the append rather than
  // after it: one fsync less on the turn's path. A crash between the two leaves an index that
  // runs ahead of the file or lags it, which the next writer that does not know the file finds
  // and rewrites (events-file-recovery.ts), as it does a torn append.
  const indexDue = shape.entries !== file.shape.entries || file.index === undefined
  const [written, index] = await Promise.all([
    ctx.objects.append(keys.events, toBytes(`${lines.join('\n')}\n`), {
      at: file.size,
      ifSize: file.size,
      ...(file.version === undefined ? {} : { ifVersion: file.version }),
      durable,
    }),
    indexDue
      ? writeIndex(ctx.objects, keys, file.shape.entries.length, shape, file.index)
      : undefined,
  ])
  const next: EventsFile = {
    ...file,
    size: written.size,
    version: written.version,
    through: file.through + lines.length,
    batch: batch.batch,
    shape,
    ...(index ? { index } : {}),
    unsynced: !durable,
  }
  ctx.cache.setEventsFile(keys.root, next)
  ctx.cache.forgetBatchesThrough(keys.root, batch.batch - 1)
  return next
}

/**
 * Writes index/turns.json for the file's `shape`. When this process knows the index as it stands
 * (`known`, with `before` entries), only the new entries are appended — a write of the same size
 * at turn 1,000 as at turn 2 — else it is put whole (compare-and-swap on the known etag; created
 * when none is known). Like the file's lines, the bytes appended at an offset are a function of
 * the log, so writers racing there write the same bytes; a torn append leaves an index that does
 * not parse, which the next writer that reads the file rewrites (events-file-recovery.ts).
 */
async function writeIndex(
  objects: AppendingStore,
  keys: SessionKeys,
  before: number,
  shape: FileShape,
  known: KnownIndex | undefined,
): Promise<KnownIndex> {
  const added = shape.entries.slice(before)
  if (known?.version !== undefined && added.length > 0) {
    const written = await objects.append(
      keys.turnIndex,
      toBytes(serializeTurnIndexAppend(before, added)),
      {
        at: known.size - TURN_INDEX_TAIL.length,
        ifSize: known.size,
        ifVersion: known.version,
        durable: false,
      },
    )
    return { etag: undefined, size: written.size, version: written.version }
  }
  const body = toBytes(serializeTurnIndex({ entries: [...shape.entries] }))
  const written = await objects.put(keys.turnIndex, body, {
    contentType: 'application/json',
    ...(known?.etag === undefined ? { ifNoneMatch: '*' } : { ifMatch: known.etag }),
  })
  return { etag: written.etag, size: body.length, version: written.version }
}

import { isTurnlineError } from '../contract/errors.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import type { TurnIndex } from '../contract/turn-index.ts'
import { parseTurnIndex, salvageTurnIndex, serializeTurnIndex } from '../contract/turn-index.ts'
import type { StoredObject } from '../ports/object-store.ts'
import { completeLines, emptyShape, extendShape } from './events-file-shape.ts'
import type { EventsFile, EventsFileContext } from './events-file-state.ts'
import { retainedAfterCut } from './events-file-state.ts'
import { fromBytes, toBytes } from './json-bytes.ts'
import { type KnownBatch, readBatchesVia } from './rollup.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'
import { cutHead } from './turn-index-builder.ts'

/** The part of events.jsonl known to hold the right lines: [0, size) holds [headSeq, through). */
interface Prefix {
  size: number
  headSeq: number
  through: number
  batch: number
}

const NOTHING: Prefix = { size: 0, headSeq: 0, through: 0, batch: -1 }

/**
 * Reads events.jsonl and brings it up to `snapshot`, for a writer that does not know the file
 * as it is. What the file holds is checked against the log, never trusted blindly:
 *
 * - the prefix the manifest describes is trusted when the file still is that version (its etag,
 *   after a rewrite) or still ends that prefix with the last line of the manifest's batch
 *   (`events_bytes`, after appends); without a manifest, from byte 0;
 * - after it, each following batch's lines are accepted only if the file holds exactly them;
 * - what follows (a torn append, lines of a batch that never became durable, anything else) is
 *   cut off by the next append, which writes the missing batches' lines at the end of what was
 *   accepted. A cut of old turns (the cap), or a file whose prefix cannot be trusted, is
 *   rewritten whole from the batches (a put; O(history) in that last case, which only a crash
 *   inside a rewrite or a damaged file leads to).
 *
 * The turn index is rebuilt from the accepted lines (turn numbers and timestamps kept from the
 * stored one) and written when it differs.
 */
export async function recoverEventsFile(
  ctx: EventsFileContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
): Promise<EventsFile> {
  const [stored, storedIndex] = await Promise.all([
    ctx.objects.get(keys.events),
    ctx.objects.get(keys.turnIndex),
  ])
  const known = ctx.cache.batches(keys.root)
  const trusted = await trustedPrefix(ctx, keys, snapshot.manifest?.value, stored, known)
  const read = { stored, storedIndex }
  if (trusted) {
    try {
      const lines = await linesAfter(ctx, keys, snapshot, stored, trusted)
      if (lines) return await write(ctx, keys, snapshot, read, lines)
    } catch (error) {
      // A prefix that is not valid text after all is rebuilt from the batches.
      if (!isTurnlineError(error, 'corrupt_data')) throw error
    }
  }
  const all = await readBatchesVia(known, ctx.objects, keys, range(0, snapshot.lastBatch))
  const lines = all.flatMap((batch) => batch.lines)
  return write(ctx, keys, snapshot, read, { kept: 0, lines, headSeq: 0, later: all, rebuild: true })
}

/** The file's lines as they should be, and how many of them it already holds (`kept`). */
interface Planned {
  kept: number
  lines: string[]
  headSeq: number
  /** Batches read for it (their commit times date the turns they complete). */
  later: KnownBatch[]
  /** Nothing of the stored file is kept. */
  rebuild: boolean
  /** Bytes of the stored file that hold the kept lines. */
  keptBytes?: number
}

/** The trusted prefix, the following batches the file holds, and the ones it misses. */
async function linesAfter(
  ctx: EventsFileContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  stored: StoredObject | null,
  prefix: Prefix,
): Promise<Planned | undefined> {
  const file = stored?.body ?? new Uint8Array(0)
  const numbers = range(prefix.batch + 1, snapshot.lastBatch)
  const later = await readBatchesVia(ctx.cache.batches(keys.root), ctx.objects, keys, numbers)
  let size = prefix.size
  let held = 0
  let heldLines = 0
  for (const batch of later) {
    const expected = toBytes(`${batch.lines.join('\n')}\n`)
    if (!holdsAt(file, size, expected)) break
    size += expected.length
    held += 1
    heldLines += batch.lines.length
  }
  const keptLines =
    size > 0 ? completeLines(fromBytes(file.subarray(0, size), 'events.jsonl')).lines : []
  const lines = [...keptLines, ...later.slice(held).flatMap((batch) => batch.lines)]
  // The manifest's counts must agree with the bytes it vouches for, and the result with the log.
  if (keptLines.length !== prefix.through - prefix.headSeq + heldLines) return undefined
  if (prefix.headSeq + lines.length !== snapshot.nextSeq) return undefined
  return {
    kept: keptLines.length,
    lines,
    headSeq: prefix.headSeq,
    later,
    rebuild: false,
    keptBytes: size,
  }
}

/** Writes the planned file (an append, or a whole rewrite for a cut or a rebuild) and its index. */
async function write(
  ctx: EventsFileContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  read: { stored: StoredObject | null; storedIndex: StoredObject | null },
  planned: Planned,
): Promise<EventsFile> {
  const { objects } = ctx
  const { stored, storedIndex } = read
  const previous = readIndex(storedIndex)
  let { lines, headSeq } = planned
  let firstTurn = planned.rebuild ? 1 : (previous?.entries[0]?.turn_number ?? 1)
  const cutting = lines.length > ctx.maxRetained
  if (cutting) {
    const cut = cutHead(lines, retainedAfterCut(ctx.maxRetained))
    lines = cut.lines
    headSeq += cut.removed
    firstTurn += cut.removedTurns
  }
  let version = stored?.version
  const storedSize = stored?.body.length ?? 0
  const keptBytes = planned.keptBytes ?? 0
  if (cutting || (planned.rebuild && stored)) {
    const text = lines.length ? `${lines.join('\n')}\n` : ''
    const written = await objects.put(keys.events, toBytes(text), {
      contentType: 'application/x-ndjson',
      ...(stored ? { ifMatch: stored.etag } : { ifNoneMatch: '*' }),
    })
    version = written.version
  } else if (lines.length > planned.kept || storedSize !== keptBytes || !stored) {
    const added = lines.slice(planned.kept)
    const written = await objects.append(
      keys.events,
      toBytes(added.length ? `${added.join('\n')}\n` : ''),
      {
        at: keptBytes,
        ifSize: storedSize,
        ...(stored?.version === undefined ? {} : { ifVersion: stored.version }),
      },
    )
    version = written.version
  }
  const endTimes = new Map<number, string>()
  for (const { batch } of planned.later) {
    for (let i = 0; i < batch.events.length; i++) {
      endTimes.set(batch.first_seq + i, batch.committed_at)
    }
  }
  const ts = new Map(
    planned.rebuild ? [] : (previous?.entries.map((e) => [e.turn_number, e.ts]) ?? []),
  )
  let lastTs = new Date(0).toISOString()
  const shape = extendShape(emptyShape(firstTurn), lines, headSeq, (turn, seq) => {
    lastTs = ts.get(turn) ?? endTimes.get(seq) ?? lastTs
    return lastTs
  })
  const file: EventsFile = {
    size: shape.size,
    version,
    headSeq,
    through: snapshot.nextSeq,
    batch: snapshot.lastBatch,
    shape,
    index: undefined,
  }
  const index = toBytes(serializeTurnIndex({ entries: [...shape.entries] }))
  if (storedIndex && sameBytes(storedIndex.body, index)) {
    const { etag, version } = storedIndex
    return { ...file, index: { etag, size: index.length, version } }
  }
  const written = await objects.put(keys.turnIndex, index, {
    contentType: 'application/json',
    ...(storedIndex ? { ifMatch: storedIndex.etag } : { ifNoneMatch: '*' }),
  })
  return { ...file, index: { etag: written.etag, size: index.length, version: written.version } }
}

/** What the manifest says the file holds, when the file shows it still does (see above). */
async function trustedPrefix(
  ctx: EventsFileContext,
  keys: SessionKeys,
  manifest: SessionManifest | undefined,
  stored: StoredObject | null,
  known: ReadonlyMap<number, KnownBatch>,
): Promise<Prefix | undefined> {
  if (!manifest) return NOTHING
  const prefix: Prefix = {
    size: 0,
    headSeq: manifest.rolled_head_seq,
    through: manifest.rolled_through,
    batch: manifest.rolled_batch,
  }
  if (manifest.rolled_batch < 0 || prefix.through === prefix.headSeq) {
    return prefix.through === prefix.headSeq ? prefix : undefined
  }
  if (!stored) return undefined
  if (manifest.rollup_etag !== undefined && manifest.rollup_etag === stored.etag) {
    return { ...prefix, size: stored.body.length }
  }
  const bytes = manifest.events_bytes
  if (bytes === undefined || bytes > stored.body.length) return undefined
  const [last] = await readBatchesVia(known, ctx.objects, keys, [manifest.rolled_batch])
  const line = last?.lines[last.lines.length - 1]
  if (line === undefined) return undefined
  const expected = toBytes(`${line}\n`)
  return holdsAt(stored.body, bytes - expected.length, expected)
    ? { ...prefix, size: bytes }
    : undefined
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && holdsAt(a, 0, b)
}

function holdsAt(file: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at < 0 || at + expected.length > file.length) return false
  for (let i = 0; i < expected.length; i++) if (file[at + i] !== expected[i]) return false
  return true
}

function readIndex(stored: StoredObject | null): TurnIndex | undefined {
  if (!stored) return undefined
  try {
    return parseTurnIndex(stored.body)
  } catch {
    // A torn append keeps its whole entries; a damaged index is rebuilt, its timestamps falling
    // back to the batches'.
    return salvageTurnIndex(stored.body)
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i)
}

import type { Batch } from '../contract/batch.ts'
import { isTurnlineError } from '../contract/errors.ts'
import { serializeVersionedLine } from '../contract/serialize.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import {
  createPart,
  droppedParts,
  type EventPart,
  planParts,
  readPartLines,
} from './event-parts.ts'
import { fromBytes } from './json-bytes.ts'
import { readBatches } from './rehydrate.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'
import { cutHead } from './turn-index-builder.ts'

/** VT Code DEFAULT_MAX_EVENTS: events retained in events.jsonl (older completed turns are cut). */
export const MAX_RETAINED_EVENTS = 10_000

/** What the rolled events are, as recorded in the manifest. */
export interface RollupState {
  /** Seq after the last rolled event (the rolled events are [headSeq, rolledThrough)). */
  rolledThrough: number
  headSeq: number
  /** Last batch whose events are rolled (-1: none). */
  rolledBatch: number
  /**
   * Format 1 on a store that cannot append (before parts): etag of the events.jsonl this state
   * describes; any other version is not trusted.
   */
  etag?: string
  /**
   * On a store that appends: the file's first `bytes` bytes hold [headSeq, rolledThrough); it
   * may have grown since (events-file.ts).
   */
  bytes?: number
  /** On a store that cannot append: the parts that hold the events (event-parts.ts). */
  parts?: readonly EventPart[]
}

export const EMPTY_ROLLUP: RollupState = { rolledThrough: 0, headSeq: 0, rolledBatch: -1 }

/** A batch this process committed, with its events' canonical lines as it wrote them. */
export interface KnownBatch {
  batch: Batch
  lines: readonly string[]
}

/**
 * What this process last rolled up: the next rollup starts from it instead of reading the parts
 * back. Used only while the manifest still lists the same parts.
 */
export interface RolledCopy {
  parts: readonly EventPart[]
  headSeq: number
  /** The lines of seqs [headSeq, end of the last part). */
  lines: readonly string[]
}

/** A rollup's outcome: the state to record, and the objects to delete once it is recorded. */
export interface Rolled {
  state: RollupState
  copy: RolledCopy
  /** Parts (and a format-1 events.jsonl and its index) no manifest in force needs any more. */
  obsolete: string[]
}

/**
 * Rolls the events up to the snapshot on a store that cannot append: one create-only part with
 * the lines since the last rollup (event-parts.ts), VT Code's cap applied at the head. The
 * parts a manifest lists are trusted when they hold as many lines as their names say; else
 * (a damaged or missing part) they are rebuilt from the batches into one part, as is a format-1
 * `events.jsonl` (its lines, when it is the version the manifest records) at the first rollup.
 */
export async function rollup(
  store: ObjectStore,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  state: RollupState,
  maxRetained = MAX_RETAINED_EVENTS,
  known: ReadonlyMap<number, KnownBatch> = new Map(),
  copy?: RolledCopy,
): Promise<Rolled> {
  let current = await currentLines(store, keys, state, copy)
  let batches = await batchesAfter(current.base)
  if (current.base.headSeq + current.lines.length + count(batches) !== snapshot.nextSeq) {
    current = { lines: [], base: EMPTY_ROLLUP, whole: true }
    batches = await batchesAfter(current.base)
  }
  const cut = cutHead([...current.lines, ...batches.flatMap((b) => b.lines)], maxRetained)
  const headSeq = current.base.headSeq + cut.removed
  const end = snapshot.nextSeq
  const from = current.whole ? headSeq : Math.max(current.base.rolledThrough, headSeq)
  const plan = planParts(
    current.whole ? [] : (current.base.parts ?? []),
    from < end ? [from, end] : undefined,
    headSeq,
  )
  await Promise.all(plan.created.map((part) => createPart(store, keys, part, cut.lines, headSeq)))
  const obsolete = droppedParts(keys, state.parts ?? [], plan.parts)
  if (state.etag !== undefined) obsolete.push(keys.events, keys.turnIndex)
  return {
    state: { rolledThrough: end, headSeq, rolledBatch: snapshot.lastBatch, parts: plan.parts },
    copy: { parts: plan.parts, headSeq, lines: cut.lines },
    obsolete,
  }

  function batchesAfter(base: RollupState): Promise<KnownBatch[]> {
    const numbers = Array.from(
      { length: snapshot.lastBatch - base.rolledBatch },
      (_, i) => base.rolledBatch + 1 + i,
    )
    return readBatchesVia(known, store, keys, numbers)
  }
}

/**
 * The rolled lines as the manifest describes them, and the state they are of: this process's
 * copy, the parts, or a format-1 events.jsonl (`whole`: written again as one part); nothing
 * from EMPTY_ROLLUP (`whole`) when they cannot be trusted.
 */
async function currentLines(
  store: ObjectStore,
  keys: SessionKeys,
  state: RollupState,
  copy: RolledCopy | undefined,
): Promise<{ lines: readonly string[]; base: RollupState; whole: boolean }> {
  const nothing = { lines: [], base: EMPTY_ROLLUP, whole: true }
  if (state.rolledBatch < 0) return { ...nothing, whole: false }
  const size = state.rolledThrough - state.headSeq
  if (state.parts) {
    if (copy && copy.headSeq === state.headSeq && sameParts(copy.parts, state.parts)) {
      return { lines: copy.lines, base: state, whole: false }
    }
    const lines = await readPartLines(store, keys, state.parts, state.headSeq)
    return lines?.length === size ? { lines, base: state, whole: false } : nothing
  }
  if (state.etag === undefined) return nothing
  const file = await store.get(keys.events)
  if (!file || file.etag !== state.etag) return nothing
  try {
    const lines = splitLines(fromBytes(file.body, keys.events))
    return lines.length === size ? { lines, base: state, whole: true } : nothing
  } catch (error) {
    if (isTurnlineError(error, 'corrupt_data')) return nothing
    throw error
  }
}

function sameParts(a: readonly EventPart[], b: readonly EventPart[]): boolean {
  return a.length === b.length && a.every(([f, e], i) => b[i]?.[0] === f && b[i]?.[1] === e)
}

function count(batches: readonly KnownBatch[]): number {
  return batches.reduce((sum, b) => sum + b.lines.length, 0)
}

/** Batches this process committed itself are taken from memory; the rest are read. */
export async function readBatchesVia(
  known: ReadonlyMap<number, KnownBatch>,
  store: ObjectStore,
  keys: SessionKeys,
  numbers: number[],
): Promise<KnownBatch[]> {
  const missing = numbers.filter((n) => !known.has(n))
  const read = new Map(
    (await readBatches(store, keys, missing)).map((batch) => [
      batch.batch,
      { batch, lines: batch.events.map((line) => serializeVersionedLine(line.event)) },
    ]),
  )
  return numbers.map((n) => (known.get(n) ?? read.get(n)) as KnownBatch)
}

function splitLines(text: string): string[] {
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

import type { Batch } from '../contract/batch.ts'
import { isTurnlineError } from '../contract/errors.ts'
import { serializeVersionedLine } from '../contract/serialize.ts'
import type { TurnIndex } from '../contract/turn-index.ts'
import { parseTurnIndex, serializeTurnIndex } from '../contract/turn-index.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { fromBytes, toBytes } from './json-bytes.ts'
import { readBatches } from './rehydrate.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'
import { buildTurnIndex, cutHead } from './turn-index-builder.ts'

/** VT Code DEFAULT_MAX_EVENTS: events retained in events.jsonl (older completed turns are cut). */
export const MAX_RETAINED_EVENTS = 10_000

/** What events.jsonl holds, as recorded in the manifest. */
export interface RollupState {
  /** Seq after the last rolled event (events.jsonl covers [headSeq, rolledThrough)). */
  rolledThrough: number
  headSeq: number
  /** Last batch whose events are in events.jsonl (-1: none). */
  rolledBatch: number
  /** Etag of the events.jsonl this state describes; any other version is not trusted. */
  etag?: string
  /**
   * On a store that appends: the file's first `bytes` bytes hold [headSeq, rolledThrough); it
   * may have grown since (events-file.ts).
   */
  bytes?: number
}

export const EMPTY_ROLLUP: RollupState = { rolledThrough: 0, headSeq: 0, rolledBatch: -1 }

/** A batch this process committed, with its events' canonical lines as it wrote them. */
export interface KnownBatch {
  batch: Batch
  lines: readonly string[]
}

/**
 * What this process last wrote as events.jsonl and index/turns.json, with their etags: the next
 * rollup starts from it instead of reading both back. Only a hint — both writes are
 * compare-and-swap on these etags, so a copy that no longer matches the store loses the race
 * (the rollup is skipped and the copy dropped), never overwrites anything.
 */
export interface RolledCopy {
  etag: string
  lines: readonly string[]
  index: { value: TurnIndex; etag: string } | undefined
}

/**
 * Rewrites events.jsonl (If-Match CAS) and index/turns.json to cover every committed batch up
 * to the snapshot. Returns the new state, or undefined when another writer changed events.jsonl
 * first (then nothing is written). An events.jsonl that the manifest does not describe (a crash
 * mid-rollup) is rebuilt from the batches.
 */
export async function rollup(
  store: ObjectStore,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  state: RollupState,
  maxRetained = MAX_RETAINED_EVENTS,
  known: ReadonlyMap<number, KnownBatch> = new Map(),
  copy?: RolledCopy,
): Promise<{ state: RollupState; copy: RolledCopy } | undefined> {
  const current = await currentFile(store, keys, state, copy)
  const trusted = current ? current.etag === state.etag : state.etag === undefined
  const base = trusted ? state : EMPTY_ROLLUP
  const [storedIndex, batches] = await Promise.all([
    current?.copy?.index ?? readStoredIndex(store, keys),
    readBatchesVia(
      known,
      store,
      keys,
      Array.from(
        { length: snapshot.lastBatch - base.rolledBatch },
        (_, i) => base.rolledBatch + 1 + i,
      ),
    ),
  ])

  const lines = trusted && current ? [...current.lines()] : []
  const endTimes = new Map<number, string>()
  for (const { batch, lines: batchLines } of batches) {
    batchLines.forEach((line, i) => {
      lines.push(line)
      endTimes.set(batch.first_seq + i, batch.committed_at)
    })
  }
  const cut = cutHead(lines, maxRetained)
  const headSeq = base.headSeq + cut.removed
  const oldIndex = trusted && current ? storedIndex?.value : undefined
  const index: TurnIndex = buildTurnIndex(cut.lines, headSeq, oldIndex, endTimes, cut.removedTurns)
  const text = cut.lines.length ? `${cut.lines.join('\n')}\n` : ''

  let etag: string
  try {
    const written = await store.put(
      keys.events,
      toBytes(text),
      current
        ? { ifMatch: current.etag, contentType: 'application/x-ndjson' }
        : { ifNoneMatch: '*' },
    )
    etag = written.etag
  } catch (error) {
    if (isTurnlineError(error, 'conflict', 'not_found')) return undefined
    throw error
  }
  let indexCopy: RolledCopy['index']
  try {
    // CAS too: a slower rollup must never put back an index older than the file it describes.
    const written = await store.put(keys.turnIndex, toBytes(serializeTurnIndex(index)), {
      contentType: 'application/json',
      ...(storedIndex ? { ifMatch: storedIndex.etag } : { ifNoneMatch: '*' }),
    })
    indexCopy = { value: index, etag: written.etag }
  } catch (error) {
    if (!isTurnlineError(error, 'conflict', 'not_found')) throw error
  }
  return {
    state: { rolledThrough: snapshot.nextSeq, headSeq, rolledBatch: snapshot.lastBatch, etag },
    copy: { etag, lines: cut.lines, index: indexCopy },
  }
}

/**
 * events.jsonl as it stands: this process's copy when it is the version the manifest records
 * (no read), else read from the store.
 */
async function currentFile(
  store: ObjectStore,
  keys: SessionKeys,
  state: RollupState,
  copy: RolledCopy | undefined,
): Promise<{ etag: string; lines: () => readonly string[]; copy?: RolledCopy } | undefined> {
  if (copy && state.etag !== undefined && copy.etag === state.etag) {
    return { etag: copy.etag, lines: () => copy.lines, copy }
  }
  const file = await store.get(keys.events)
  if (!file) return undefined
  return { etag: file.etag, lines: () => splitLines(fromBytes(file.body, keys.events)) }
}

async function readStoredIndex(
  store: ObjectStore,
  keys: SessionKeys,
): Promise<{ value: TurnIndex | undefined; etag: string } | undefined> {
  const stored = await store.get(keys.turnIndex)
  return stored ? { value: readIndex(stored.body), etag: stored.etag } : undefined
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

function readIndex(body: Uint8Array): TurnIndex | undefined {
  try {
    return parseTurnIndex(body)
  } catch {
    return undefined // a damaged index is rebuilt; timestamps of old turns fall back
  }
}

function splitLines(text: string): string[] {
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

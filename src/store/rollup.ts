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
}

export const EMPTY_ROLLUP: RollupState = { rolledThrough: 0, headSeq: 0, rolledBatch: -1 }

/**
 * Geometric rollup: rewrite events.jsonl when the unrolled events are at least as many as the
 * rolled ones (and at least MIN_ROLLUP_EVENTS), so every event is rewritten O(1) times on
 * average (total bytes written O(n)). `force` (at thread.completed) rolls everything.
 */
export function rollupDue(snapshot: SessionSnapshot, state: RollupState, force: boolean): boolean {
  const unrolled = snapshot.nextSeq - state.rolledThrough
  if (unrolled <= 0) return false
  return force || unrolled >= Math.max(MIN_ROLLUP_EVENTS, state.rolledThrough - state.headSeq)
}

/** No rollup before this many events are pending (readers use the batches meanwhile). */
export const MIN_ROLLUP_EVENTS = 64

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
  known: ReadonlyMap<number, Batch> = new Map(),
): Promise<RollupState | undefined> {
  const file = await store.get(keys.events)
  const trusted = file ? file.etag === state.etag : state.etag === undefined
  const base = trusted ? state : EMPTY_ROLLUP
  const [storedIndex, batches] = await Promise.all([
    store.get(keys.turnIndex),
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

  const lines = trusted && file ? splitLines(fromBytes(file.body, keys.events)) : []
  const endTimes = new Map<number, string>()
  for (const batch of batches) {
    batch.events.forEach((line, i) => {
      lines.push(serializeVersionedLine(line.event))
      endTimes.set(batch.first_seq + i, batch.committed_at)
    })
  }
  const cut = cutHead(lines, maxRetained)
  const headSeq = base.headSeq + cut.removed
  const oldIndex = trusted && file && storedIndex ? readIndex(storedIndex.body) : undefined
  const index: TurnIndex = buildTurnIndex(cut.lines, headSeq, oldIndex, endTimes, cut.removedTurns)
  const text = cut.lines.length ? `${cut.lines.join('\n')}\n` : ''

  let etag: string
  try {
    const written = await store.put(
      keys.events,
      toBytes(text),
      file ? { ifMatch: file.etag, contentType: 'application/x-ndjson' } : { ifNoneMatch: '*' },
    )
    etag = written.etag
  } catch (error) {
    if (isTurnlineError(error, 'conflict', 'not_found')) return undefined
    throw error
  }
  try {
    // CAS too: a slower rollup must never put back an index older than the file it describes.
    await store.put(keys.turnIndex, toBytes(serializeTurnIndex(index)), {
      contentType: 'application/json',
      ...(storedIndex ? { ifMatch: storedIndex.etag } : { ifNoneMatch: '*' }),
    })
  } catch (error) {
    if (!isTurnlineError(error, 'conflict', 'not_found')) throw error
  }
  return { rolledThrough: snapshot.nextSeq, headSeq, rolledBatch: snapshot.lastBatch, etag }
}

/** Batches this process committed itself are taken from memory; the rest are read. */
async function readBatchesVia(
  known: ReadonlyMap<number, Batch>,
  store: ObjectStore,
  keys: SessionKeys,
  numbers: number[],
): Promise<Batch[]> {
  const missing = numbers.filter((n) => !known.has(n))
  const read = new Map((await readBatches(store, keys, missing)).map((b) => [b.batch, b]))
  return numbers.map((n) => (known.get(n) ?? read.get(n)) as Batch)
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

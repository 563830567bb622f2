import { countingCoordinator } from '../../adapters/memory/counting-coordinator.ts'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { isSummaryRequest } from './compaction-engine.ts'
import { prose, seededRandom } from './compaction-histories.ts'
import { echoTool } from './engine-deps.ts'
import { countingKeyWrites } from './key-write-bytes.ts'
import { startScriptedEngine } from './scripted-engine.ts'

/** What one turn of a long session cost. */
export interface TurnSample {
  turn: number
  ms: number
  /** Object store requests (get, put, list, delete, append). */
  objectRequests: number
  coordinatorTrips: number
  /** Bytes written to the store. */
  bytesWritten: number
  /**
   * Of them, bytes of `index/turns.json` (VT Code's turn index: on a store that appends, the
   * turn's entry is appended; a store that cannot append keeps none, its events being parts).
   */
  turnIndexBytes: number
  /** The largest model request of the turn (JSON bytes of its messages). */
  requestBytes: number
  compacted: boolean
  /**
   * The turn's content (UTF-8 bytes): its input, the tool's answers, the model's answers and tool
   * call arguments — what the session is about, which the store should hold about once.
   */
  contentBytes: number
}

export interface LongSessionOptions {
  turns: number
  store: ObjectStore
  /** The session's context window (tokens): compaction crosses it again and again. */
  contextTokens: number
  /** Bytes of each turn's tool answer (a few KB). */
  toolBytes: number
  /** Every `bigEvery` turns the tool answers `bigBytes` instead (kept as an output artifact). */
  bigEvery?: number
  bigBytes?: number
  /** After each turn (awaited; not part of the turn's figures), with the session's id. */
  onTurn?: (sample: TurnSample, sessionId: string) => void | Promise<void>
}

/**
 * One session driven turn by turn through the engine (SessionService) on `store`: each turn the
 * model calls the `lookup` tool (a few KB back, now and then MBs) and then answers; the model
 * reports usage from its request size, so compaction runs whenever the context fills. Every
 * turn's object requests, coordinator round trips, bytes written and largest model request.
 */
export async function runLongSession(options: LongSessionOptions): Promise<TurnSample[]> {
  const index = countingKeyWrites(options.store, (key) => key.endsWith('/index/turns.json'))
  const counted = countingObjectStore(index.store)
  const coord = countingCoordinator(new MemoryCoordinator())
  const engine = startScriptedEngine({ store: counted.store, coordinator: coord.coordinator })
  const random = seededRandom(31)
  const filler = (bytes: number) =>
    prose(random, 400)
      .repeat(Math.ceil(bytes / 2000))
      .slice(0, bytes)
  let turn = 0
  let content = 0
  const utf8 = (text: string) => new TextEncoder().encode(text).byteLength
  engine.receiver.setReply(() => {
    const big = options.bigEvery !== undefined && turn % options.bigEvery === 0
    const body = filler(big ? (options.bigBytes ?? 0) : options.toolBytes)
    content += utf8(body)
    return { body }
  })
  engine.model.respond((request) => {
    if (isSummaryRequest(request)) return { text: `Summary at turn ${turn}: ${prose(random, 40)}` }
    const messages = request.messages as { role: string }[]
    if (messages.at(-1)?.role === 'user') {
      const args = JSON.stringify({ q: `turn ${turn}` })
      content += utf8(args)
      return { toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: args }] }
    }
    const text = `done ${turn}: ${prose(random, 30)}`
    content += utf8(text)
    return { text }
  })
  const { session_id } = await engine.service.createSession('t1', {
    instructions: 'Be brief.',
    harness: { max_context_tokens: options.contextTokens },
    tools: [echoTool(engine.receiver.url)],
  })
  const samples: TurnSample[] = []
  for (turn = 1; turn <= options.turns; turn++) {
    counted.reset()
    index.take()
    const input = `task ${turn}: ${prose(random, 30)}`
    content = utf8(input)
    const trips = coord.calls()
    const seen = engine.model.requests.length
    const started = performance.now()
    const result = await engine.service.stepTurn('t1', session_id, { input })
    const ms = performance.now() - started
    if (result.status !== 'completed') throw new Error(`turn ${turn} ended ${result.status}`)
    const counts = counted.snapshot()
    const sample: TurnSample = {
      turn,
      ms,
      objectRequests: counts.get + counts.put + counts.list + counts.delete + counts.append,
      coordinatorTrips: coord.calls() - trips,
      bytesWritten: counts.bytesWritten,
      turnIndexBytes: index.take(),
      requestBytes: Math.max(
        ...engine.model.requests.slice(seen).map((r) => JSON.stringify(r.messages).length),
      ),
      compacted: result.events.some((e) => e.type === 'thread.compact_boundary'),
      contentBytes: content,
    }
    samples.push(sample)
    await options.onTurn?.(sample, session_id)
  }
  return samples
}

/**
 * What `store` holds, in bytes, by kind of object: the session folder's own (`log/`, `state/`,
 * `history/`, `outputs/`, `events.jsonl`, …) and everything else under `other`.
 */
export async function storedBytesByKind(store: ObjectStore): Promise<Map<string, number>> {
  const kinds = new Map<string, number>()
  for (const { key, size } of (await listAll(store, '')).objects) {
    const inSession = /\/\.vtcode\/sessions\/[^/]+\/(.*)$/.exec(key)?.[1]
    const kind = inSession === undefined ? 'other' : (/^[^/]+\//.exec(inSession)?.[0] ?? inSession)
    kinds.set(kind, (kinds.get(kind) ?? 0) + size)
  }
  return kinds
}

/** The median of `values` (0 for none). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/** The `q`-quantile of `values` (0–1; 0 for none). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}

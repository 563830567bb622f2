import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import {
  median,
  runLongSession,
  storedBytesByKind,
  type TurnSample,
} from '../support/long-session.ts'

/**
 * 100 turns of one session with a 4 KB tool answer each turn, a 2 MB one every 25 turns (kept as
 * an output artifact) and an 8,000-token context window, compacting again and again. What does
 * not depend on the machine's speed stays flat from the first stage (turns 2–11) to the last
 * (turns 91–100): object requests and coordinator round trips of an ordinary turn, bytes stored
 * per turn, and the size of a model request. The 1,000-turn version is `npm run bench:long-session`.
 */
const stage = (samples: TurnSample[], from: number, to: number) =>
  samples.filter((s) => s.turn >= from && s.turn <= to && s.turn % 25 !== 0)
const BIG = 2 * 1024 * 1024
const workload = { turns: 100, contextTokens: 8000, toolBytes: 4096, bigEvery: 25, bigBytes: BIG }

/**
 * What the store holds at the end against the session's content, the 2 MB answers left out of
 * both (each is one output artifact): every tool answer and answer is stored once in the batches,
 * checkpoints name the transcript instead of writing it again, batches are stored compressed with
 * only the state fields they change, and a session keeps its newest 10 compaction archives, as
 * VT Code does. Before those, this workload stored 7.3× its content (checkpoints alone 0.50×);
 * now 2.9× (memory and S3-like), of which `events.jsonl` (VT Code's copy of the events) is 1.3–1.4×
 * (docs/performance.md).
 */
async function expectStoredOnce(store: MemoryObjectStore, samples: TurnSample[]) {
  const kinds = await storedBytesByKind(store)
  const content = samples.reduce((sum, s) => sum + s.contentBytes, 0) - 4 * BIG
  const artifacts = kinds.get('outputs/') ?? 0
  expect(artifacts).toBeGreaterThanOrEqual(4 * BIG)
  const stored = [...kinds.values()].reduce((sum, bytes) => sum + bytes, 0) - artifacts
  expect(stored / content).toBeLessThan(3)
  expect((kinds.get('log/') ?? 0) / content).toBeLessThan(0.8)
  expect((kinds.get('state/') ?? 0) / content).toBeLessThan(0.25)
}

describe('a 100-turn session', { timeout: 120_000 }, () => {
  it('costs the same per turn at its end as at its start', async () => {
    const store = new MemoryObjectStore()
    const samples = await runLongSession({ ...workload, store })
    expect(samples.filter((s) => s.compacted).length).toBeGreaterThanOrEqual(5)
    const first = stage(samples, 2, 11)
    const last = stage(samples, 91, 100)
    const of = (rows: TurnSample[], key: keyof TurnSample) => rows.map((s) => Number(s[key]))
    expect(median(of(last, 'objectRequests'))).toBeLessThanOrEqual(
      median(of(first, 'objectRequests')),
    )
    expect(median(of(last, 'coordinatorTrips'))).toBeLessThanOrEqual(
      median(of(first, 'coordinatorTrips')),
    )
    // Bytes stored per turn, VT Code's turn index (index/turns.json) among them: its entry is
    // appended, so it costs the same at turn 100 as at turn 2.
    expect(median(of(last, 'bytesWritten'))).toBeLessThan(1.5 * median(of(first, 'bytesWritten')))
    const index = (rows: TurnSample[]) => median(of(rows, 'turnIndexBytes'))
    expect(index(first)).toBeGreaterThan(0)
    expect(index(last)).toBeLessThanOrEqual(index(first) + 8) // wider offsets, more digits
    // A request holds at most the context window (about 4 bytes a token, JSON besides) and the
    // 2 MB answers never enter it.
    expect(Math.max(...of(samples, 'requestBytes'))).toBeLessThan(8000 * 6)
    expect(median(of(last, 'requestBytes'))).toBeLessThan(2 * median(of(first, 'requestBytes')))
    await expectStoredOnce(store, samples)
  })

  it('on a store that cannot append (as S3) makes 2 object requests a tool turn', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const samples = await runLongSession({ ...workload, store })
    const ordinary = samples.filter((s) => s.turn > 1 && s.turn % 25 !== 0 && !s.compacted)
    // The batch committed before the tool runs and the final one; checkpoints, the manifest and
    // the rewrite of events.jsonl come every 16 batches.
    expect(median(ordinary.map((s) => s.objectRequests))).toBe(2)
    // Bytes written per turn stay flat: the events rolled up every 16 batches go into a new part
    // each time (store/event-parts.ts), never a rewrite of all of them, and there is no turn
    // index to rewrite. Means over 24 turns (3 rollups each); rewriting events.jsonl whole, the
    // last stage wrote 5.5× the first (22 KB, then 122 KB a turn; now 14 and 16 KB).
    const mean = (rows: TurnSample[]) =>
      rows.reduce((sum, s) => sum + s.bytesWritten, 0) / Math.max(1, rows.length)
    const first = mean(stage(samples, 2, 25))
    const last = mean(stage(samples, 73, 96))
    expect(last).toBeLessThan(1.3 * first)
    expect(Math.max(...samples.map((s) => s.turnIndexBytes))).toBe(0)
    await expectStoredOnce(store, samples)
  })
})

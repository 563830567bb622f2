import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CountingObjectStore,
  countingObjectStore,
} from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { assertNoOrphansInRequests, isSummaryRequest } from '../support/compaction-engine.ts'
import { prose, seededRandom } from '../support/compaction-histories.ts'
import { echoTool } from '../support/engine-deps.ts'
import { type ScriptedEngine, startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * 500 turns with a 2,000-token context, compacting as it goes (the model reports usage from the
 * request size). A cold process — a fresh store client with no cache — rehydrates and compacts
 * the session reading the manifest, the newest checkpoint and the batches after it: the object
 * reads (and their bytes) stay flat from turn 100 to turn 500, while the log keeps growing.
 */
let engine: ScriptedEngine
let counting: CountingObjectStore
beforeAll(async () => {
  counting = countingObjectStore(new MemoryObjectStore())
  engine = startScriptedEngine({ store: counting.store })
})
afterAll(async () => {
  await engine.close()
})

interface ColdRead {
  get: number
  list: number
  bytesRead: number
  keys: string[]
}

/**
 * A store that records which keys were read, over the counting store (appending as it does), and
 * the bytes of events.jsonl and index/turns.json read: a process's first commit reads both once,
 * to check them against the log (bounded by VT Code's cap, not by the segment), which
 * `bytesRead` leaves out.
 */
function recording(inner: ObjectStore, keys: string[], events: { bytes: number }): ObjectStore {
  const append = inner.append?.bind(inner)
  return {
    get: async (key) => {
      keys.push(key)
      const found = await inner.get(key)
      if (isVtcodeFile(key)) events.bytes += found?.body.length ?? 0
      return found
    },
    put: (key, body, options) => inner.put(key, body, options),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    ...(append ? { append } : {}),
  }
}

const isVtcodeFile = (key: string) =>
  key.endsWith('/events.jsonl') || key.endsWith('/index/turns.json')

async function cold<T>(run: (service: SessionService, sessions: SessionStore) => Promise<T>) {
  const keys: string[] = []
  const events = { bytes: 0 }
  const store = recording(counting.store, keys, events)
  const sessions = new SessionStore({ store, cacheSize: 0 })
  const service = new SessionService({ ...engine.deps, sessions })
  counting.reset()
  const value = await run(service, sessions)
  const { get, list, bytesRead } = counting.snapshot()
  const read = { get, list, bytesRead: bytesRead - events.bytes, keys }
  return { value, read: read satisfies ColdRead }
}

// 500 turns take ~3 s alone; a loaded machine may need several times that.
describe('a 500-turn session', { timeout: 60_000 }, () => {
  it('rehydrates and compacts from its current segment only', async () => {
    const { service, model } = engine
    const random = seededRandom(7)
    const { session_id: sid } = await service.createSession('t1', {
      instructions: 'Be brief.',
      harness: { max_context_tokens: 2000 },
      tools: [echoTool(engine.receiver.url)],
    })
    const ref = { tenant: 't1', workspace: 'default', sessionId: sid }
    const root = `t1/default/.vtcode/sessions/${sid}/`
    let turn = 0
    // Every third turn calls the lookup tool first, so compactions cut across tool groups.
    model.respond((request) => {
      if (isSummaryRequest(request))
        return { text: `Summary at turn ${turn}: ${prose(random, 20)}` }
      const messages = request.messages as { role: string }[]
      if (turn % 3 === 0 && messages.at(-1)?.role === 'user') {
        const args = JSON.stringify({ q: prose(random, 12) })
        return { toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: args }] }
      }
      return { text: `done ${turn}: ${prose(random, 30)}` }
    })

    const measure = async () => {
      const open = await cold((_, sessions) => sessions.open(ref))
      const compact = await cold((fresh) => fresh.compact('t1', sid))
      const log = await listAll(counting.store, `${root}log/`)
      // Nothing older than the newest checkpoint is read (its own batch may be: a new process
      // checks events.jsonl against the manifest's last batch); of the archive only the envelope.
      const checkpoint = open.read.keys.find((k) => k.startsWith(`${root}state/`)) ?? ''
      const after = checkpoint.slice(`${root}state/`.length)
      for (const key of [...open.read.keys, ...compact.read.keys]) {
        if (key.startsWith(`${root}log/`))
          expect(key.slice(`${root}log/`.length) >= after, `${key} after ${after}`).toBe(true)
        if (key.startsWith(`${root}history/`)) expect(key).toMatch(/\.memory\.json$/)
      }
      expect(compact.read.keys.filter(isVtcodeFile)).toHaveLength(2)
      expect(compact.value.events.map((e) => e.type)).toEqual(['thread.compact_boundary'])
      const [boundary] = compact.value.events
      return {
        compactedArchive:
          boundary?.type === 'thread.compact_boundary' ? boundary.history_artifact_path : undefined,
        open: open.read,
        compact: compact.read,
        logBytes: log.objects.reduce((sum, o) => sum + o.size, 0),
        logBatches: log.objects.length,
      }
    }

    // Measured right after an automatic compaction near turn 100 and near turn 500 (the same
    // point of the cycle), and once more at the end, wherever the cycle stands.
    let early: Awaited<ReturnType<typeof measure>> | undefined
    let late: Awaited<ReturnType<typeof measure>> | undefined
    let boundaries = 0
    for (turn = 1; turn <= 500 || !late; turn++) {
      const result = await service.stepTurn('t1', sid, {
        input: `task ${turn}: ${prose(random, 30)}`,
      })
      expect(result.status).toBe('completed')
      const compacted = result.events.some((e) => e.type === 'thread.compact_boundary')
      if (compacted) boundaries += 1
      // (On a text turn: a tool turn commits one batch more.)
      const text = turn % 3 !== 0
      if (compacted && text && turn >= 100 && !early) early = await measure()
      if (compacted && text && turn >= 480 && !late) late = await measure()
      expect(turn).toBeLessThan(600)
    }
    const end = await measure()
    if (!early || !late) throw new Error('not measured')
    expect(boundaries).toBeGreaterThan(20)
    expect(late.logBatches).toBeGreaterThan(4 * early.logBatches)
    // Same point of the cycle: the same reads, about the same bytes, however long the log.
    expect(late.open.get).toBe(early.open.get)
    expect(late.open.list).toBe(early.open.list)
    expect(late.compact.get).toBe(early.compact.get)
    expect(late.open.bytesRead).toBeLessThan(1.5 * early.open.bytesRead)
    expect(late.compact.bytesRead).toBeLessThan(1.5 * early.compact.bytesRead)
    // Anywhere in the cycle: the manifest, one checkpoint and at most 16 batches after it.
    expect(end.open.get).toBeLessThanOrEqual(18)
    expect(engine.receiver.calls.length).toBeGreaterThan(150)
    expect(end.open.bytesRead).toBeLessThan(end.logBytes / 20)
    // VT Code's retention of compaction archives: the newest 10, every envelope.
    const history = (await listAll(counting.store, `${root}history/`)).objects.map((o) => o.key)
    const archives = history.filter((key) => key.endsWith('.jsonl'))
    expect(archives).toHaveLength(10)
    expect(history.filter((key) => key.endsWith('.memory.json')).length).toBeGreaterThan(boundaries)
    const newest = end.compactedArchive
    expect(archives).toContain(newest)
    console.info(
      JSON.stringify({
        turns: turn - 1,
        boundaries,
        requests: model.requests.length,
        reads: Object.fromEntries(
          Object.entries({ early, late, end }).map(([name, m]) => [
            name,
            {
              logBatches: m.logBatches,
              logBytes: m.logBytes,
              open: { get: m.open.get, list: m.open.list, bytes: m.open.bytesRead },
              compact: { get: m.compact.get, list: m.compact.list, bytes: m.compact.bytesRead },
            },
          ]),
        ),
      }),
    )
    assertNoOrphansInRequests(model.requests)
  })
})

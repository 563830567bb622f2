import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import {
  HISTORY_ARCHIVES_KEPT,
  retainArchives,
} from '../../src/core/compaction/archive-retention.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'

/**
 * VT Code keeps the newest 10 compaction archives of a session and every memory envelope
 * (`HistoryFileManager::cleanup_old_files`): so does Turnline, counting the archives of committed
 * compactions (the state's list). A state from before the list was kept lists `history/` once,
 * oldest first by the turn, then the second, then the `-2`… of a name taken within one second.
 */
const root = 't1/default/.vtcode/sessions/s1/'
const body = new TextEncoder().encode('{"role":"user","content":"x"}\n')

async function keysUnder(store: MemoryObjectStore, prefix: string): Promise<string[]> {
  return (await listAll(store, prefix)).objects.map((o) => o.key).sort()
}

describe('compaction archive retention', () => {
  it('lists once for an older state: the newest 10, every envelope and everything else', async () => {
    const store = new MemoryObjectStore()
    const stems = [
      's1_0009_20261205T100000Z',
      's1_0012_20261205T100500Z',
      's1_0012_20261205T100500Z-2',
      's1_0012_20261205T100501Z',
      ...Array.from(
        { length: 8 },
        (_, i) => `s1_${String(20 + i).padStart(4, '0')}_20261205T11000${i}Z`,
      ),
      's1_10000_20261206T090000Z', // a turn past 4 digits is newer, not older
    ]
    for (const stem of stems) {
      await store.put(`${root}history/${stem}.jsonl`, body)
      await store.put(`${root}history/${stem}.memory.json`, body)
    }
    const others = [
      `${root}history/s10_0001_20261205T090000Z.jsonl`, // another session sharing the prefix
      `${root}history/notes.txt`,
      `${root}history/nested/s1_0001_20261205T090000Z.jsonl`,
      `t1/default/.vtcode/sessions/s2/history/s2_0001_20261205T090000Z.jsonl`,
    ]
    for (const key of others) await store.put(key, body)

    const added = `${root}history/s1_10001_20261206T090001Z.jsonl`
    await store.put(added, body)
    const retention = await retainArchives(store, { root, sessionId: 's1', kept: undefined, added })
    const deleted = retention.deleted
    expect(retention.kept).toHaveLength(HISTORY_ARCHIVES_KEPT)
    expect(retention.kept.at(-1)).toBe('10001_20261206T090001Z.jsonl')
    expect(deleted).toEqual([
      `${root}history/s1_0009_20261205T100000Z.jsonl`,
      `${root}history/s1_0012_20261205T100500Z.jsonl`,
      `${root}history/s1_0012_20261205T100500Z-2.jsonl`,
      `${root}history/s1_0012_20261205T100501Z.jsonl`,
    ])
    const left = await keysUnder(store, '')
    for (const key of deleted) expect(left).not.toContain(key)
    for (const stem of stems) expect(left).toContain(`${root}history/${stem}.memory.json`)
    for (const key of others) expect(left).toContain(key)
    const kept = left.filter((key) => /history\/s1_\d+_[^/]*\.jsonl$/.test(key))
    expect(kept).toHaveLength(HISTORY_ARCHIVES_KEPT)
    expect(kept).toContain(`${root}history/s1_10000_20261206T090000Z.jsonl`)
  })

  it('costs no LIST and one DELETE once the state lists 10', async () => {
    const counted = countingObjectStore(new MemoryObjectStore())
    const kept = stems(1, HISTORY_ARCHIVES_KEPT)
    for (const key of [...kept, ...envelopes(kept)]) await counted.store.put(key, body)
    const added = stems(11, 11)[0] as string
    await counted.store.put(added, body)
    counted.reset()
    await expectOldestGone(counted.store, kept, added)
    expect(counted.snapshot()).toMatchObject({ list: 0, delete: 1, get: 0, put: 0 })
  })

  it('counts and removes only what the state lists: never an orphan nor one in flight', async () => {
    const store = new MemoryObjectStore()
    const kept = stems(5, 5 + HISTORY_ARCHIVES_KEPT - 1)
    // A crashed compaction's archive (named newest) and one another instance is writing now,
    // named oldest (its clock behind): neither is committed, so neither counts nor goes.
    const orphan = `${root}history/s1_0099_20261205T100000Z.jsonl`
    const inFlight = `${root}history/s1_0001_20261205T100000Z.jsonl`
    const added = stems(100, 100)[0] as string
    for (const key of [...kept, orphan, inFlight, added]) await store.put(key, body)
    await expectOldestGone(store, kept, added)
    const left = await keysUnder(store, root)
    expect(left).toContain(orphan)
    expect(left).toContain(inFlight)
    expect(left).not.toContain(kept[0])
  })

  it('keeps in the list what it failed to remove, and removes it next time', async () => {
    const inner = new MemoryObjectStore()
    let failing = true
    const flaky: ObjectStore = {
      get: (key) => inner.get(key),
      put: (key, data, options) => inner.put(key, data, options),
      list: (prefix, options) => inner.list(prefix, options),
      delete: async (key) => {
        if (failing) throw new Error('503 Slow Down')
        await inner.delete(key)
      },
    }
    const kept = stems(1, HISTORY_ARCHIVES_KEPT)
    const [first, second] = stems(11, 12) as [string, string]
    for (const key of [...kept, first, second]) await inner.put(key, body)
    const once = await retainArchives(flaky, {
      root,
      sessionId: 's1',
      kept: names(kept),
      added: first,
    })
    expect(once.deleted).toEqual([])
    expect(once.failures).toEqual([expect.stringContaining('503 Slow Down')])
    expect(once.kept).toEqual(names([...kept, first]))
    failing = false
    const twice = await retainArchives(flaky, {
      root,
      sessionId: 's1',
      kept: once.kept,
      added: second,
    })
    expect(twice.deleted).toEqual(kept.slice(0, 2))
    expect(twice.kept).toEqual(names([...kept.slice(2), first, second]))
    expect(await keysUnder(inner, root)).toEqual([...kept.slice(2), first, second].sort())
  })

  it('never reads a listed name as anything but an archive of its session', async () => {
    const store = new MemoryObjectStore()
    const other = 't1/default/.vtcode/sessions/s2/history/s2_0001_20261205T090000Z.jsonl'
    await store.put(other, body)
    await store.put(`${root}state/0000000001.json`, body)
    const odd = ['../../s2/history/s2_0001_20261205T090000Z.jsonl', '../state/0000000001.json']
    const kept = [...odd, ...names(stems(1, HISTORY_ARCHIVES_KEPT))]
    const added = stems(11, 11)[0] as string
    const retention = await retainArchives(store, { root, sessionId: 's1', kept, added })
    expect(retention.deleted).toEqual(stems(1, 1))
    expect(await store.get(other)).not.toBeNull()
    expect(await store.get(`${root}state/0000000001.json`)).not.toBeNull()
  })
})

const prefix = `${root}history/s1_`

/** From the state listing `kept` (keys, oldest first), `added` pushes out the oldest alone. */
async function expectOldestGone(store: ObjectStore, kept: readonly string[], added: string) {
  const retention = await retainArchives(store, { root, sessionId: 's1', kept: names(kept), added })
  expect(retention.deleted).toEqual([kept[0]])
  expect(retention.kept).toEqual(names([...kept.slice(1), added]))
}

function stems(from: number, to: number): string[] {
  return Array.from(
    { length: to - from + 1 },
    (_, i) => `${prefix}${String(from + i).padStart(4, '0')}_20261205T100000Z.jsonl`,
  )
}

function names(keys: readonly string[]): string[] {
  return keys.map((key) => key.slice(prefix.length))
}

function envelopes(archives: readonly string[]): string[] {
  return archives.map((key) => key.replace(/\.jsonl$/, '.memory.json'))
}

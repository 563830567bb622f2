import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import {
  HISTORY_ARCHIVES_KEPT,
  pruneHistoryArchives,
} from '../../src/core/compaction/archive-retention.ts'
import { listAll } from '../../src/store/list-all.ts'

/**
 * VT Code keeps the newest 10 compaction archives of a session and every memory envelope
 * (`HistoryFileManager::cleanup_old_files`): so does Turnline, oldest first by the turn, then the
 * second, then the `-2`… of a name taken within one second.
 */
const root = 't1/default/.vtcode/sessions/s1/'
const body = new TextEncoder().encode('{"role":"user","content":"x"}\n')

async function keysUnder(store: MemoryObjectStore, prefix: string): Promise<string[]> {
  return (await listAll(store, prefix)).objects.map((o) => o.key).sort()
}

describe('compaction archive retention', () => {
  it('keeps the newest 10 archives of the session, every envelope and everything else', async () => {
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

    const deleted = await pruneHistoryArchives(store, root, 's1')
    expect(deleted).toEqual([
      `${root}history/s1_0009_20261205T100000Z.jsonl`,
      `${root}history/s1_0012_20261205T100500Z.jsonl`,
      `${root}history/s1_0012_20261205T100500Z-2.jsonl`,
    ])
    const left = await keysUnder(store, '')
    for (const key of deleted) expect(left).not.toContain(key)
    for (const stem of stems) expect(left).toContain(`${root}history/${stem}.memory.json`)
    for (const key of others) expect(left).toContain(key)
    const kept = left.filter((key) => /history\/s1_\d+_[^/]*\.jsonl$/.test(key))
    expect(kept).toHaveLength(HISTORY_ARCHIVES_KEPT)
    expect(kept).toContain(`${root}history/s1_10000_20261206T090000Z.jsonl`)
  })

  it('costs one LIST and deletes nothing while the session has 10 or fewer', async () => {
    const counted = countingObjectStore(new MemoryObjectStore())
    for (let turn = 1; turn <= HISTORY_ARCHIVES_KEPT; turn++) {
      await counted.store.put(
        `${root}history/s1_${String(turn).padStart(4, '0')}_20261205T100000Z.jsonl`,
        body,
      )
    }
    counted.reset()
    expect(await pruneHistoryArchives(counted.store, root, 's1')).toEqual([])
    expect(counted.snapshot()).toMatchObject({ list: 1, delete: 0 })
  })
})

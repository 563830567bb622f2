/**
 * What removing a compaction's oldest archive costs on the real stores (the fs store, S3 on
 * moto), with a session's `history/` holding the envelopes of `--envelopes` earlier compactions
 * (every envelope is kept, as VT Code keeps them) besides its 10 archives: by listing `history/`
 * (how the archives to keep were found before the state listed them; still the path of a state
 * written before) against from the state's list. Each timed step deletes one archive, which is
 * put back untimed. Medians of `--runs`, in one process. Figures, not pass/fail.
 *
 *   npx tsx bench/compaction-archive-retention.ts [--envelopes 100,2000] [--runs 9]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { FsObjectStore } from '../adapters/fs/fs-object-store.ts'
import {
  archivePrefix,
  HISTORY_ARCHIVES_KEPT,
  listedArchives,
  retainArchives,
} from '../src/core/compaction/archive-retention.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { benchS3Store } from './support/bench-s3.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    envelopes: { type: 'string', default: '100,2000' },
    runs: { type: 'string', default: '9' },
  },
})
const sizes = values.envelopes.split(',').map(Number)
const runs = Number(values.runs)
const body = new TextEncoder().encode('{}\n')
const stamp = (n: number) => `${String(n).padStart(4, '0')}_20261207T100000Z.jsonl`

async function putAll(store: ObjectStore, keys: readonly string[]): Promise<void> {
  for (let at = 0; at < keys.length; at += 50) {
    await Promise.all(keys.slice(at, at + 50).map((key) => store.put(key, body)))
  }
}

async function measure(name: string, store: ObjectStore, envelopes: number): Promise<void> {
  const root = `t1/default/.vtcode/sessions/s${envelopes}/`
  const prefix = archivePrefix(root, `s${envelopes}`)
  const archives = Array.from({ length: HISTORY_ARCHIVES_KEPT + 1 }, (_, i) => stamp(i + 1))
  const planted = Array.from(
    { length: envelopes },
    (_, i) => `${prefix}0000_20260101T000000Z-${i + 2}.memory.json`,
  )
  await putAll(store, [...planted, ...archives.map((a) => prefix + a)])
  const added = prefix + (archives.at(-1) as string)
  const kept = archives.slice(0, -1)
  const timed = { listing: [] as number[], list: [] as number[] }
  for (let run = 0; run < runs; run++) {
    for (const way of ['listing', 'list'] as const) {
      const started = performance.now()
      if (way === 'listing') {
        // The former way: list the session's archives, then delete past the newest 10.
        const found = await listedArchives(store, root, `s${envelopes}`)
        const excess = found.slice(0, Math.max(0, found.length - HISTORY_ARCHIVES_KEPT))
        for (const archive of excess) await store.delete(prefix + archive)
      } else {
        await retainArchives(store, { root, sessionId: `s${envelopes}`, kept, added })
      }
      timed[way].push(performance.now() - started)
      await store.put(prefix + (kept[0] as string), body)
    }
  }
  const [before, after] = [median(timed.listing), median(timed.list)]
  console.log(
    `${name.padEnd(10)} ${String(envelopes).padStart(5)} envelopes: listing ${before.toFixed(2)} ms, ` +
      `the state's list ${after.toFixed(2)} ms (${(before / after).toFixed(1)}×)`,
  )
}

const dir = await mkdtemp(join(tmpdir(), 'turnline-archive-bench-'))
const s3 = await benchS3Store()
try {
  for (const envelopes of sizes) {
    await measure('fs', new FsObjectStore({ root: join(dir, 'store') }), envelopes)
    await measure('s3 (moto)', s3.store, envelopes)
  }
} finally {
  await s3.destroy()
  await rm(dir, { recursive: true, force: true })
}

/**
 * The fs store's own cost per operation, next to an earlier revision's, in one interleaved run:
 * medians (and p90) in ms of a create-only put (a new name in a session-log-like folder, the
 * session's commit point), an `ifMatch` put (a compare-and-swap replace, like the manifest), a
 * plain put (a replace that makes the name durable) and a get, over N iterations. Every
 * iteration runs each operation on every revision in turn (the order rotated per iteration), so
 * a noisy neighbour hits both alike; the ratio column is this checkout ÷ the earlier revision.
 * Durable stores (fsync on), 2 KB bodies by default, in a temporary folder on `--dir`'s
 * filesystem. A reference row times the raw loop's write (bench/support/raw-loop.ts) in the
 * same iterations: the same bytes appended to a file that exists already, fsynced (no new name,
 * no folder fsync: about what an append-only segment per session would cost a commit, before its
 * framing and lock). Figures, not pass/fail.
 *
 *   npm run bench:fs-writes -- [--iterations 400] [--warmup 40] [--bytes 2048]
 *                              [--before <git revision>] [--dir /tmp]
 */
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { median, percentile } from './support/stats.ts'

/** The last revision before the fs store's write path was reworked. */
const DEFAULT_BEFORE = 'db60324'

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '400' },
    warmup: { type: 'string', default: '40' },
    bytes: { type: 'string', default: '2048' },
    before: { type: 'string', default: DEFAULT_BEFORE },
    dir: { type: 'string', default: tmpdir() },
  },
})
const ITERATIONS = Number(values.iterations)
const WARMUP = Number(values.warmup)
const BYTES = Number(values.bytes)

type StoreClass = new (options: { root: string }) => ObjectStore
const OPERATIONS = ['create-only put', 'ifMatch put', 'plain put', 'get'] as const
type Operation = (typeof OPERATIONS)[number]

interface Subject {
  label: string
  store: ObjectStore
  etag: string
  next: number
  times: Record<Operation, number[]>
}

async function subject(label: string, Store: StoreClass, root: string): Promise<Subject> {
  const store = new Store({ root })
  const { etag } = await store.put('t/w/sessions/s1/manifest.json', body(0))
  await store.put('t/w/sessions/s1/plain.json', body(0))
  const times = Object.fromEntries(OPERATIONS.map((op) => [op, [] as number[]]))
  return { label, store, etag, next: 1, times: times as Record<Operation, number[]> }
}

function body(n: number): Uint8Array {
  const text = `{"n":${n},"pad":"${'x'.repeat(Math.max(0, BYTES - 20))}"}`
  return new TextEncoder().encode(text.slice(0, Math.max(BYTES, 16)))
}

async function run(s: Subject, op: Operation, record: boolean): Promise<void> {
  const n = s.next++
  const bytes = body(n)
  const started = performance.now()
  switch (op) {
    case 'create-only put':
      await s.store.put(`t/w/sessions/s1/log/${String(n).padStart(10, '0')}.json`, bytes, {
        ifNoneMatch: '*',
      })
      break
    case 'ifMatch put':
      s.etag = (await s.store.put('t/w/sessions/s1/manifest.json', bytes, { ifMatch: s.etag })).etag
      break
    case 'plain put':
      await s.store.put('t/w/sessions/s1/plain.json', bytes)
      break
    case 'get':
      await s.store.get('t/w/sessions/s1/manifest.json')
      break
  }
  if (record) s.times[op].push(performance.now() - started)
}

/** The raw loop's write: the file opened for appending, the bytes written, fsynced, closed. */
async function append(path: string, n: number, times: number[] | undefined): Promise<void> {
  const bytes = body(n)
  const started = performance.now()
  const file = await open(path, 'a')
  try {
    await file.write(bytes)
    await file.sync()
  } finally {
    await file.close()
  }
  times?.push(performance.now() - started)
}

const scratch = await mkdtemp(join(values.dir, 'turnline-fs-writes-'))
let before: BeforeTree | undefined
try {
  const segment = join(scratch, 'session.jsonl')
  const appends: number[] = []
  before = await checkoutBefore(values.before)
  const current = (await import('../adapters/fs/fs-object-store.ts')).FsObjectStore
  const earlier = (await import(join(before.root, 'adapters/fs/fs-object-store.ts')))
    .FsObjectStore as StoreClass
  const subjects = [
    await subject('this checkout', current, join(scratch, 'current')),
    await subject(before.label, earlier, join(scratch, 'before')),
  ]
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const order = i % 2 === 0 ? subjects : [...subjects].reverse()
    for (const op of OPERATIONS) {
      for (const s of order) await run(s, op, i >= WARMUP)
    }
    await append(segment, i, i >= WARMUP ? appends : undefined)
  }
  const [now, then] = subjects as [Subject, Subject]
  console.log(
    `fs store, durable, ${BYTES}-byte bodies, ${ITERATIONS} iterations (+${WARMUP} warm-up)`,
  )
  console.log(`ms, median (p90)        this checkout    ${then.label.padEnd(16)} ratio`)
  const cell = (t: number[]) =>
    `${median(t).toFixed(3)} (${percentile(t, 90).toFixed(3)})`.padEnd(17)
  for (const op of OPERATIONS) {
    const a = median(now.times[op])
    const b = median(then.times[op])
    console.log(
      `${op.padEnd(22)} ${cell(now.times[op])}${cell(then.times[op])}${(a / b).toFixed(2)}`,
    )
  }
  const created = median(now.times['create-only put']) / median(appends)
  console.log(
    `${"raw loop's append".padEnd(22)} ${cell(appends)}(reference: the raw loop's write; create-only put ÷ it ${created.toFixed(2)})`,
  )
} finally {
  await before?.remove()
  await rm(scratch, { recursive: true, force: true })
}

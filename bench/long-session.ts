/**
 * `npm run bench:long-session [-- --turns N] [--window TOKENS] [--store fs|s3|memory] [--svg FILE]`:
 * one session driven to 1,000 turns through the engine on the fs store (a temporary folder; `s3`:
 * moto from `npm run services:start`), a 4 KB tool answer each turn, a 2 MB one every 100 turns
 * (kept as an output artifact), a 16,000-token context window so compaction crosses again and
 * again. Prints, by stage (turns 2–11, 91–100, 291–300, 991–1,000): median and p99 turn time as a
 * ratio to turns 2–11, model request size, object requests, fsyncs (fs) and coordinator round
 * trips per turn, bytes written per turn; then what the store holds at the end, by kind of
 * object, against the content (messages and tool outputs); writes the curve (median turn time
 * ratio and bytes per turn over the session, by blocks of 10 turns) as an SVG; and the time a
 * cold engine takes to rehydrate the session after turns 10, 100, 300 and 1,000 (the objects
 * and bytes it reads), as a ratio to the first. Method and figures:
 * docs/performance.md#long-sessions.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { FsObjectStore } from '../adapters/fs/fs-object-store.ts'
import { MemoryObjectStore } from '../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import {
  median,
  quantile,
  runLongSession,
  storedBytesByKind,
  type TurnSample,
} from '../test/support/long-session.ts'
import { benchS3Store } from './support/bench-s3.ts'
import { coldRehydration, type Rehydration } from './support/cold-rehydration.ts'
import { fsyncCount, installFsyncCounter } from './support/fsync-counter.ts'

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '1000' },
    window: { type: 'string', default: '16000' },
    store: { type: 'string', default: 'fs' },
    big: { type: 'string', default: '100' },
    svg: { type: 'string' },
  },
})
const turns = Number(values.turns)
const bigEvery = Number(values.big)
const dir = await mkdtemp(join(tmpdir(), 'turnline-long-session-'))
await installFsyncCounter(dir)
const s3 = values.store === 's3' ? await benchS3Store() : undefined
const store: ObjectStore =
  s3?.store ??
  (values.store === 'memory' ? new MemoryObjectStore() : new FsObjectStore({ root: dir }))
const fsyncs: number[] = []
let syncs = fsyncCount()
/** A store adapter that shares nothing with the one the turns ran on (fs: a new instance). */
const fresh = (): ObjectStore => (values.store === 'fs' ? new FsObjectStore({ root: dir }) : store)
const rehydrations: Rehydration[] = []
const REHYDRATE_AT = [10, 100, 300, 1000]
try {
  const samples = await runLongSession({
    turns,
    store,
    contextTokens: Number(values.window),
    toolBytes: 4096,
    ...(bigEvery > 0 ? { bigEvery, bigBytes: 2 * 1024 * 1024 } : {}),
    onTurn: async (s, sessionId) => {
      fsyncs.push(fsyncCount() - syncs)
      if (REHYDRATE_AT.includes(s.turn) || (s.turn === turns && !REHYDRATE_AT.includes(turns))) {
        rehydrations.push(await coldRehydration(fresh, sessionId, s.turn))
      }
      syncs = fsyncCount()
      if (s.turn % 100 === 0) process.stderr.write(`turn ${s.turn}\n`)
    },
  })
  report(samples)
  reportRehydration()
  await reportStored(samples)
  if (values.svg) await writeFile(values.svg, curve(samples))
} finally {
  await s3?.destroy()
  await rm(dir, { recursive: true, force: true })
}

/** What the store holds at the end, by kind of object, against the content of the session. */
async function reportStored(samples: TurnSample[]) {
  const kinds = await storedBytesByKind(store)
  const content = samples.reduce((sum, s) => sum + s.contentBytes, 0)
  const big = samples.filter((s) => bigEvery > 0 && s.turn % bigEvery === 0).length
  const stored = [...kinds.values()].reduce((sum, v) => sum + v, 0)
  console.log(
    `\nstored at the end (${values.store}, ${samples.length} turns, ${big} with a 2 MB answer):`,
  )
  console.log('| objects | bytes | per turn | ÷ content |')
  console.log('|---|---|---|---|')
  for (const [kind, bytes] of [...kinds].sort((a, b) => b[1] - a[1])) {
    console.log(
      `| ${kind} | ${bytes} | ${Math.round(bytes / samples.length)} | ${(bytes / content).toFixed(2)} |`,
    )
  }
  console.log(
    `| **all** | ${stored} | ${Math.round(stored / samples.length)} | **${(stored / content).toFixed(2)}** |`,
  )
  console.log(
    `content (messages and tool outputs): ${content} bytes, ${Math.round(content / samples.length)} a turn`,
  )
  const ordinary = samples
    .map((s, i) => ({ s, f: fsyncs[i] ?? 0 }))
    .filter(({ s }) => !s.compacted && !(bigEvery > 0 && s.turn % bigEvery === 0) && s.turn > 1)
  console.log(
    `ordinary turn (median): ${median(ordinary.map(({ s }) => s.objectRequests))} object requests, ` +
      `${median(ordinary.map(({ f }) => f))} fsyncs, ${median(ordinary.map(({ s }) => s.bytesWritten))} bytes written`,
  )
}

/** Rehydration by a cold engine after each stage, as a ratio to the first. */
function reportRehydration() {
  const first = rehydrations[0]
  if (!first) return
  console.log(
    `\nrehydration by a cold engine (${values.store}; median of 15 after one untimed, each on a new store adapter):`,
  )
  console.log('| after turn | ms | ÷ first | objects read | bytes read |')
  console.log('|---|---|---|---|---|')
  for (const r of rehydrations) {
    console.log(
      `| ${r.turn} | ${r.ms.toFixed(1)} | ${(r.ms / first.ms).toFixed(2)} | ${r.objects} | ${r.bytes} |`,
    )
  }
}

function mean(values: number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / (values.length || 1)
}

function stageOf(samples: TurnSample[], from: number, to: number) {
  return samples.filter((s) => s.turn >= from && s.turn <= to)
}

function report(samples: TurnSample[]) {
  const base = stageOf(samples, 2, 11)
  const baseMs = median(base.map((s) => s.ms))
  const ordinary = samples.filter((s) => bigEvery === 0 || s.turn % bigEvery !== 0)
  console.log(`${samples.length} turns, ${samples.filter((s) => s.compacted).length} compactions`)
  console.log(
    '| turns | median t / t(2–11) | p99 t / t(2–11) | model request (max, bytes) | object requests (median) | coordinator trips (median) | bytes stored (median) | bytes stored (mean, checkpoints and compactions included) | of them index/turns.json |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const [from, to] of [
    [2, 11],
    [91, 100],
    [291, 300],
    [991, 1000],
  ] as const) {
    const rows = stageOf(ordinary, from, to)
    if (rows.length === 0) continue
    const col = (key: keyof TurnSample) => rows.map((s) => Number(s[key]))
    console.log(
      `| ${from}–${to} | ${(median(col('ms')) / baseMs).toFixed(2)} | ${(quantile(col('ms'), 0.99) / baseMs).toFixed(2)} | ${Math.max(...col('requestBytes'))} | ${median(col('objectRequests'))} | ${median(col('coordinatorTrips'))} | ${median(col('bytesWritten'))} | ${Math.round(mean(col('bytesWritten')))} | ${median(col('turnIndexBytes'))} |`,
    )
  }
  const total = samples.reduce((sum, s) => sum + s.bytesWritten, 0)
  console.log(
    `bytes written in all: ${total}; a turn with a 2 MB answer writes it once as an artifact`,
  )
}

/** Median turn time (ratio to turns 2–11) and bytes written, per block of 10 turns. */
function curve(samples: TurnSample[]): string {
  const baseMs = median(stageOf(samples, 2, 11).map((s) => s.ms))
  const blocks: { turn: number; ratio: number; bytes: number }[] = []
  for (let from = 1; from <= samples.length; from += 10) {
    const rows = stageOf(samples, from, from + 9).filter(
      (s) => bigEvery === 0 || s.turn % bigEvery !== 0,
    )
    if (rows.length === 0) continue
    blocks.push({
      turn: from + 9,
      ratio: median(rows.map((s) => s.ms)) / baseMs,
      bytes: median(rows.map((s) => s.bytesWritten)),
    })
  }
  const width = 720
  const height = 260
  const x = (turn: number) => 50 + ((width - 70) * turn) / samples.length
  const maxBytes = Math.max(...blocks.map((b) => b.bytes)) * 1.2
  const yRatio = (r: number) => height - 30 - ((height - 50) * Math.min(r, 2)) / 2
  const yBytes = (b: number) => height - 30 - ((height - 50) * b) / maxBytes
  const line = (y: (b: (typeof blocks)[number]) => number) =>
    blocks.map((b) => `${x(b.turn).toFixed(1)},${y(b).toFixed(1)}`).join(' ')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11" role="img">
<title>A 1,000-turn session: median turn time and bytes stored per turn</title>
<rect width="100%" height="100%" fill="white"/>
<line x1="50" y1="${height - 30}" x2="${width - 20}" y2="${height - 30}" stroke="black"/>
<line x1="50" y1="20" x2="50" y2="${height - 30}" stroke="black"/>
<line x1="50" y1="${yRatio(1)}" x2="${width - 20}" y2="${yRatio(1)}" stroke="#ccc" stroke-dasharray="4"/>
<text x="54" y="${yRatio(1) - 4}">t = t(2–11)</text>
<text x="54" y="16">median turn time ÷ turns 2–11 (blue, 0–2) · bytes stored per turn (orange, 0–${Math.round(maxBytes)})</text>
<text x="${width / 2}" y="${height - 8}" text-anchor="middle">turn (medians of blocks of 10; the turns with a 2 MB answer left out)</text>
<text x="50" y="${height - 18}" text-anchor="middle">0</text>
<text x="${x(samples.length)}" y="${height - 18}" text-anchor="middle">${samples.length}</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="${line((b) => yRatio(b.ratio))}"/>
<polyline fill="none" stroke="#ff7f0e" stroke-width="1.5" points="${line((b) => yBytes(b.bytes))}"/>
</svg>
`
}

/**
 * What bench/long-session.ts prints and draws, in both modes: the table by stage, the store at
 * the end by kind of object, rehydration along the session, and the curve (an SVG).
 */
import type { ObjectStore } from '../../src/ports/object-store.ts'
import {
  median,
  quantile,
  storedBytesByKind,
  type TurnSample,
} from '../../test/support/long-session.ts'
import type { Rehydration } from './cold-rehydration.ts'

/** The workload's shape, as the report names it. */
export interface ReportShape {
  /** Every `bigEvery`-th turn answers 2 MB (0: none); those turns are left out of the stages. */
  bigEvery: number
  store: string
}

const stageOf = (samples: TurnSample[], from: number, to: number) =>
  samples.filter((s) => s.turn >= from && s.turn <= to)

const isBig = (s: TurnSample, shape: ReportShape) =>
  shape.bigEvery > 0 && s.turn % shape.bigEvery === 0

const ordinaryOf = (samples: TurnSample[], shape: ReportShape) =>
  samples.filter((s) => !isBig(s, shape))

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / (values.length || 1)

/** A count's median, or "—" when it was not taken (NaN). */
const counted = (values: number[]) =>
  values.some((v) => Number.isNaN(v)) ? '—' : String(median(values))

export function reportStages(samples: TurnSample[], shape: ReportShape) {
  const baseMs = median(stageOf(ordinaryOf(samples, shape), 2, 11).map((s) => s.ms))
  const ordinary = ordinaryOf(samples, shape)
  console.log(`${samples.length} turns, ${samples.filter((s) => s.compacted).length} compactions`)
  console.log(
    '| turns | median t (ms) | median t / t(2–11) | p99 t / t(2–11) | model request (max, bytes) | object requests (median) | coordinator trips (median) | bytes stored (median) | bytes stored (mean, checkpoints and compactions included) | of them index/turns.json |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|---|')
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
      `| ${from}–${to} | ${median(col('ms')).toFixed(1)} | ${(median(col('ms')) / baseMs).toFixed(2)} | ${(quantile(col('ms'), 0.99) / baseMs).toFixed(2)} | ${Math.max(...col('requestBytes'))} | ${counted(col('objectRequests'))} | ${counted(col('coordinatorTrips'))} | ${median(col('bytesWritten'))} | ${Math.round(mean(col('bytesWritten')))} | ${counted(col('turnIndexBytes'))} |`,
    )
  }
  const total = samples.reduce((sum, s) => sum + s.bytesWritten, 0)
  console.log(
    `bytes written in all: ${total}; a turn with a 2 MB answer writes it once as an artifact`,
  )
}

/** What the store holds at the end, by kind of object, against the content of the session. */
export async function reportStored(
  store: ObjectStore,
  samples: TurnSample[],
  shape: ReportShape,
  fsyncs?: number[],
) {
  const kinds = await storedBytesByKind(store)
  const content = samples.reduce((sum, s) => sum + s.contentBytes, 0)
  const big = samples.filter((s) => isBig(s, shape)).length
  const stored = [...kinds.values()].reduce((sum, v) => sum + v, 0)
  console.log(
    `\nstored at the end (${shape.store}, ${samples.length} turns, ${big} with a 2 MB answer):`,
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
    .map((s, i) => ({ s, f: fsyncs?.[i] ?? Number.NaN }))
    .filter(({ s }) => !s.compacted && s.turn > 1 && !isBig(s, shape))
  console.log(
    `ordinary turn (median): ${counted(ordinary.map(({ s }) => s.objectRequests))} object requests, ` +
      `${fsyncs ? median(ordinary.map(({ f }) => f)) : '—'} fsyncs, ${median(ordinary.map(({ s }) => s.bytesWritten))} bytes written`,
  )
}

/** Rehydration by a cold engine after each stage, as a ratio to the first. */
export function reportRehydration(rehydrations: Rehydration[], store: string) {
  const first = rehydrations[0]
  if (!first) return
  console.log(
    `\nrehydration by a cold engine (${store}; median of 15 after one untimed, each on a new store adapter):`,
  )
  console.log('| after turn | ms | ÷ first | objects read | bytes read |')
  console.log('|---|---|---|---|---|')
  for (const r of rehydrations) {
    console.log(
      `| ${r.turn} | ${r.ms.toFixed(1)} | ${(r.ms / first.ms).toFixed(2)} | ${r.objects} | ${r.bytes} |`,
    )
  }
}

/**
 * Median turn time (ratio to turns 2–11) and bytes written (median and mean: the mean counts the
 * turns that checkpoint, compact or rewrite a whole file), per block of 10 turns.
 */
export function curve(samples: TurnSample[], shape: ReportShape, title: string): string {
  const baseMs = median(stageOf(ordinaryOf(samples, shape), 2, 11).map((s) => s.ms))
  const blocks: { turn: number; ratio: number; bytes: number; meanBytes: number }[] = []
  for (let from = 1; from <= samples.length; from += 10) {
    const rows = ordinaryOf(stageOf(samples, from, from + 9), shape)
    if (rows.length === 0) continue
    blocks.push({
      turn: from + 9,
      ratio: median(rows.map((s) => s.ms)) / baseMs,
      bytes: median(rows.map((s) => s.bytesWritten)),
      meanBytes: mean(rows.map((s) => s.bytesWritten)),
    })
  }
  const width = 720
  const height = 260
  const x = (turn: number) => 50 + ((width - 70) * turn) / samples.length
  const maxBytes = Math.max(...blocks.map((b) => b.meanBytes)) * 1.2
  const yRatio = (r: number) => height - 30 - ((height - 50) * Math.min(r, 2)) / 2
  const yBytes = (b: number) => height - 30 - ((height - 50) * b) / maxBytes
  const line = (y: (b: (typeof blocks)[number]) => number) =>
    blocks.map((b) => `${x(b.turn).toFixed(1)},${y(b).toFixed(1)}`).join(' ')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11" role="img">
<title>${title}</title>
<rect width="100%" height="100%" fill="white"/>
<line x1="50" y1="${height - 30}" x2="${width - 20}" y2="${height - 30}" stroke="black"/>
<line x1="50" y1="20" x2="50" y2="${height - 30}" stroke="black"/>
<line x1="50" y1="${yRatio(1)}" x2="${width - 20}" y2="${yRatio(1)}" stroke="#ccc" stroke-dasharray="4"/>
<text x="54" y="${yRatio(1) - 4}">t = t(2–11)</text>
<text x="54" y="16">median turn time ÷ turns 2–11 (blue, 0–2) · bytes written per turn, median (orange) and mean (dashed), 0–${Math.round(maxBytes)}</text>
<text x="${width / 2}" y="${height - 8}" text-anchor="middle">turn (medians of blocks of 10; the turns with a 2 MB answer left out)</text>
<text x="50" y="${height - 18}" text-anchor="middle">0</text>
<text x="${x(samples.length)}" y="${height - 18}" text-anchor="middle">${samples.length}</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="${line((b) => yRatio(b.ratio))}"/>
<polyline fill="none" stroke="#ff7f0e" stroke-width="1.5" points="${line((b) => yBytes(b.bytes))}"/>
<polyline fill="none" stroke="#ff7f0e" stroke-width="1" stroke-dasharray="3" points="${line((b) => yBytes(b.meanBytes))}"/>
</svg>
`
}

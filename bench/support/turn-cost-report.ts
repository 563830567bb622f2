/** Figures of bench/turn-cost.ts: per-round statistics, medians over rounds, and the table. */
import { median, percentile } from './stats.ts'

/** What one variant measured in one round. */
export interface RoundSample {
  /** ms per turn, every turn of every session. */
  times: number[]
  /** CPU ms (user + system) of the whole process per turn. */
  cpu: number[]
  /** ms per turn by turn index (turn 1 first). */
  byTurn: number[][]
  bytesPerSession: number[]
  turns: number
  objectRequests: number | undefined
  /** Object requests by kind: GET, PUT, LIST (undefined when not counted). */
  objectKinds: [number, number, number, number] | undefined
  coordinatorTrips: number | undefined
  fsyncs: number
  /** Object requests and fsyncs of each turn, to tell an ordinary turn from the amortized mean. */
  requestsEach: number[]
  fsyncsEach: number[]
}

export interface RoundStats {
  mean: number
  p50: number
  p99: number
  growth: number
  /** Median ms of each turn index (turn 1 first). */
  turnMedians: number[]
  cpu: number
  bytes: number
  requestsPerTurn: number | undefined
  kindsPerTurn: [number, number, number, number] | undefined
  tripsPerTurn: number | undefined
  fsyncsPerTurn: number
  /** The median turn's object requests and fsyncs: what an ordinary turn costs. */
  requestsMedian: number | undefined
  fsyncsMedian: number
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length

export function roundStats(sample: RoundSample): RoundStats {
  const first = median(sample.byTurn[0] ?? [])
  const last = median(sample.byTurn[sample.byTurn.length - 1] ?? [])
  const per = (n: number | undefined) => (n === undefined ? undefined : n / sample.turns)
  return {
    mean: mean(sample.times),
    p50: median(sample.times),
    p99: percentile(sample.times, 99),
    growth: last / first,
    turnMedians: sample.byTurn.map((times) => median(times)),
    cpu: mean(sample.cpu),
    bytes: mean(sample.bytesPerSession),
    requestsPerTurn: per(sample.objectRequests),
    kindsPerTurn: sample.objectKinds?.map((n) => n / sample.turns) as
      | [number, number, number, number]
      | undefined,
    tripsPerTurn: per(sample.coordinatorTrips),
    fsyncsPerTurn: sample.fsyncs / sample.turns,
    requestsMedian: sample.requestsEach.length ? median(sample.requestsEach) : undefined,
    fsyncsMedian: median(sample.fsyncsEach),
  }
}

const fixed = (n: number | undefined, digits = 2) => (n === undefined ? '—' : n.toFixed(digits))
const medianOf = (values: (number | undefined)[]) => {
  const defined = values.filter((v): v is number => v !== undefined)
  return defined.length ? median(defined) : undefined
}

/**
 * One row per variant: medians over rounds of each figure, and the ratio of the variant's mean
 * (and p50) to the baseline's in the same round, median over rounds.
 */
export function report(
  names: string[],
  rounds: Map<string, RoundStats>[],
  baseline: string,
): string {
  const header = [
    'variant',
    'mean ms',
    'p50 ms',
    'p99 ms',
    'p99/p50',
    'turn N/1',
    '× base (mean)',
    '× base (p50)',
    'CPU ms',
    'CPU × base',
    'KB/session',
    'obj req/turn',
    'obj req p50',
    'get/put/append/list',
    'coord/turn',
    'fsync/turn',
    'fsync p50',
  ]
  const rows = names.map((name) => {
    const all = rounds.map((round) => round.get(name)).filter((s): s is RoundStats => !!s)
    const ratio = (pick: (s: RoundStats) => number) =>
      medianOf(
        rounds.map((round) => {
          const mine = round.get(name)
          const base = round.get(baseline)
          return mine && base ? pick(mine) / pick(base) : undefined
        }),
      )
    return [
      name,
      fixed(medianOf(all.map((s) => s.mean))),
      fixed(medianOf(all.map((s) => s.p50))),
      fixed(medianOf(all.map((s) => s.p99))),
      fixed(medianOf(all.map((s) => s.p99 / s.p50))),
      fixed(medianOf(all.map((s) => s.growth))),
      fixed(ratio((s) => s.mean)),
      fixed(ratio((s) => s.p50)),
      fixed(medianOf(all.map((s) => s.cpu))),
      fixed(ratio((s) => s.cpu)),
      fixed(medianOf(all.map((s) => s.bytes / 1024)), 1),
      fixed(medianOf(all.map((s) => s.requestsPerTurn))),
      fixed(medianOf(all.map((s) => s.requestsMedian))),
      [0, 1, 2, 3].map((i) => fixed(medianOf(all.map((s) => s.kindsPerTurn?.[i])))).join('/'),
      fixed(medianOf(all.map((s) => s.tripsPerTurn))),
      fixed(medianOf(all.map((s) => s.fsyncsPerTurn))),
      fixed(medianOf(all.map((s) => s.fsyncsMedian))),
    ]
  })
  const table = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)))
  return table
    .map((row) =>
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join('  '),
    )
    .join('\n')
}

/** Each round's mean per variant, to show the spread the medians hide. */
export function roundMeans(names: string[], rounds: Map<string, RoundStats>[]): string {
  return names
    .map((name) => {
      const means = rounds.map((round) => fixed(round.get(name)?.mean))
      return `  ${name}: ${means.join(' / ')} ms`
    })
    .join('\n')
}

/** Median ms per turn index, per variant (median over rounds of each round's median). */
export function turnProfile(names: string[], rounds: Map<string, RoundStats>[]): string {
  return names
    .map((name) => {
      const all = rounds.map((round) => round.get(name)).filter((s): s is RoundStats => !!s)
      const turns = all[0]?.turnMedians.length ?? 0
      const cells = Array.from({ length: turns }, (_, t) =>
        fixed(medianOf(all.map((s) => s.turnMedians[t])), 1),
      )
      return `  ${name}: ${cells.join(' ')}`
    })
    .join('\n')
}

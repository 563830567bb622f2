/** The process table of bench/turn-cost-user.ts: CPU per turn by process, and the first turn. */

import { median } from './stats.ts'
import type { RoundSample } from './turn-cost-report.ts'

/** What bench/turn-cost-user.ts adds to a round's sample. */
export interface ProcessSample {
  /** CPU ms of the server's process tree over the round's turns (0: in this process). */
  serverCpu: number
  mockCpu: number
  receiverCpu: number
  /** ms to create each session. */
  createMs: number[]
  /** CPU ms of the processes reported apart (the stores' proxies, moto, redis), by name. */
  othersCpu: Record<string, number>
  /** Sequential round trips to the remote stores, per turn (S3 + Upstash only). */
  sequentialEach: number[]
  storeRequests: number
  coordinatorRequests: number
}

const fixed = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? '—' : n.toFixed(digits)

/**
 * One row per variant, medians over rounds: server tree CPU per turn (and its ratio to the
 * in-process engine's CPU per turn of the same round), this process's CPU per turn, the mock's
 * and the receiver's, session creation, the first turn's median over sessions, the later
 * turns' median and the ratio of the two.
 */
export function processReport(
  names: string[],
  rounds: Map<string, RoundSample & ProcessSample>[],
  engine: string | undefined,
): string {
  const header = [
    'variant',
    'server CPU',
    '× engine CPU',
    'this process CPU',
    'mock CPU',
    'receiver CPU',
    'create ms',
    'turn 1 ms',
    'later p50 ms',
    'turn 1 ÷ later',
    'store trips seq. p50',
    'others CPU',
  ]
  /** "name ms/turn" for each process reported apart, medians over rounds. */
  const others = (name: string) => {
    const keys = [...new Set(rounds.flatMap((r) => Object.keys(r.get(name)?.othersCpu ?? {})))]
    const cells = keys.map((key) => {
      const list = rounds
        .map((r) => r.get(name))
        .filter((s): s is RoundSample & ProcessSample => !!s)
        .map((s) => (s.othersCpu[key] ?? 0) / s.turns)
      return `${key} ${fixed(median(list))}`
    })
    return cells.join(', ') || '—'
  }
  const rows = names.map((name) => {
    type Pick = (
      s: RoundSample & ProcessSample,
      round: Map<string, RoundSample>,
    ) => number | undefined
    const per = (pick: Pick) => {
      const list = rounds
        .map((round) => {
          const s = round.get(name)
          return s ? pick(s, round) : undefined
        })
        .filter((v): v is number => v !== undefined && !Number.isNaN(v))
      return list.length ? median(list) : undefined
    }
    const cpu = (s: RoundSample) => s.cpu.reduce((a, b) => a + b, 0) / s.turns
    const later = (s: RoundSample) => median(s.byTurn.slice(1).flat())
    return [
      name,
      fixed(per((s) => (s.serverCpu > 0 ? s.serverCpu / s.turns : undefined))),
      fixed(
        per((s, round) => {
          const base = engine ? round.get(engine) : undefined
          return s.serverCpu > 0 && base ? s.serverCpu / s.turns / cpu(base) : undefined
        }),
      ),
      fixed(per(cpu)),
      fixed(per((s) => s.mockCpu / s.turns)),
      fixed(per((s) => s.receiverCpu / s.turns)),
      fixed(per((s) => median(s.createMs))),
      fixed(per((s) => median(s.byTurn[0] ?? []))),
      fixed(per(later)),
      fixed(per((s) => median(s.byTurn[0] ?? []) / later(s))),
      fixed(per((s) => (s.sequentialEach.length ? median(s.sequentialEach) : undefined))),
      others(name),
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

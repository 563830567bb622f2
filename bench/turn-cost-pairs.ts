/**
 * Revisions of `npm start` against each other and the raw loop, turn by turn: each revision's
 * server is its own process (extracted with `git archive`, started as bench/turn-cost-user.ts
 * starts it, against the same mock and receiver processes), and every turn of the run is taken
 * by each variant in turn, in orders that change every turn (`balancedOrders`), so that each
 * variant follows each other one as often and none follows itself. bench/turn-cost-user.ts interleaves whole sessions in a fixed
 * rotation instead, where a variant always runs right after the same other one: on a loaded
 * machine that alone moved one revision's p50 by half against the same code in another slot
 * (docs/performance.md). Prints per variant the mean, p50 and p90 turn (first turns left out),
 * the ratios to the raw loop, and the server's CPU per turn from /proc.
 *
 * A revision may carry Node options of its own after a `|` (`main|--max-semi-space-size=32`), so
 * one revision runs against itself with other V8 flags; `--node-args` go to every server, and
 * `--env K=V,…` into the environment of those marked `main|…|env`. A fourth field names the
 * entry to start instead of infra/start.mjs, and the revision `.` is this checkout as it is (not
 * extracted): `.|||dist/node/server.mjs` is this checkout's build beside its `npm start` (`.`). `--probe <dir>` loads
 * bench/support/gc-alloc-probe.mjs into each server and signals it after the warm-up session, so
 * each writes its GC counts and allocation profile over the measured turns to <dir>. `--windows
 * <file>` writes each server's measured turns there, as `[variant, start, end]` (ns, CLOCK_MONOTONIC,
 * the clock of V8's CPU profiles): bench/profile-functions.ts keeps a profile's samples in them.
 *
 *   npx tsx bench/turn-cost-pairs.ts [--revisions main,HEAD] [--sessions 10] [--turns 20]
 *                                    [--node-args '…'] [--env K=V,…] [--probe <dir>]
 *                                    [--windows <file>]
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { benchDataDir } from './support/bench-data-dir.ts'
import { startPeerProcesses } from './support/peer-processes.ts'
import { treeCpuMs } from './support/process-tree-cpu.ts'
import { rawVariant } from './support/raw-loop.ts'
import type { Variant } from './support/turnline-variants.ts'
import { serverEntry } from './support/user-path-variants.ts'

const { values } = parseArgs({
  options: {
    revisions: { type: 'string', default: 'main,HEAD' },
    sessions: { type: 'string', default: '10' },
    turns: { type: 'string', default: '20' },
    'node-args': { type: 'string', default: '' },
    env: { type: 'string', default: '' },
    probe: { type: 'string' },
    windows: { type: 'string' },
  },
})
const words = (s: string) => s.split(' ').filter((a) => a !== '')
const EXTRA_ENV = Object.fromEntries(
  values.env
    .split(',')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
)
const PROBE = values.probe === undefined ? undefined : resolve(values.probe)
const PROBE_MODULE = join(import.meta.dirname, 'support', 'gc-alloc-probe.mjs')
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)
const root = await mkdtemp(join(benchDataDir(), 'turn-cost-pairs-'))
// As in turn-cost-user.ts: the sandbox user must reach the runners' workspaces (mkdtemp is 0700).
await chmod(root, 0o711)
const peers = await startPeerProcesses(true)
const trees: BeforeTree[] = []
const variants: { name: string; variant: Variant; pid?: number }[] = []
try {
  if (PROBE) await mkdir(PROBE, { recursive: true })
  for (const [i, spec] of values.revisions.split(',').entries()) {
    const [revision = 'HEAD', flags = '', withEnv, entryFile = 'infra/start.mjs'] = spec.split('|')
    const tree = revision === '.' ? thisCheckout(entryFile) : await checkoutBefore(revision)
    trees.push(tree)
    const dir = join(root, `rev-${i}`)
    await mkdir(dir)
    const nodeArgs = [...words(values['node-args']), ...words(flags)]
    const env: Record<string, string> = withEnv === 'env' ? { ...EXTRA_ENV } : {}
    if (PROBE) {
      nodeArgs.unshift(`--import=${PROBE_MODULE}`)
      env.TURNLINE_GC_PROBE_OUT = join(PROBE, `${i}.json`)
    }
    const name = [tree.label, flags, withEnv === 'env' ? values.env : ''].filter(Boolean).join(' ')
    const entry = await serverEntry(name, peers, dir, tree.root, [entryFile], nodeArgs, {
      env,
    })
    variants.push({ name, variant: entry.variant, pid: entry.pid })
  }
  const rawDir = join(root, 'raw')
  await mkdir(rawDir)
  variants.push({ name: 'raw loop', variant: rawVariant(peers, rawDir) })
  const times = variants.map(() => [] as number[])
  const cpu = variants.map(() => 0)
  const windows: [number, string, string][] = []
  const orders = balancedOrders(variants.length)
  // Session -1 warms every variant up; first turns are left out (a session's start is apart).
  for (let s = -1; s < SESSIONS; s++) {
    if (s === 0 && PROBE) for (const { pid } of variants) if (pid) process.kill(pid, 'SIGUSR2')
    const sessions = await Promise.all(variants.map((v) => v.variant.newSession(s)))
    for (let t = 0; t < TURNS; t++) {
      const order = orders[((s + 1) * TURNS + t) % orders.length] ?? []
      for (const i of order) {
        const { pid } = variants[i] as (typeof variants)[number]
        const before = pid === undefined ? 0 : (treeCpuMs([pid])[0] ?? 0)
        const started = performance.now()
        const startedNs = process.hrtime.bigint()
        await sessions[i]?.turn(`step ${t + 1}`, `pair-${s}-${t}`)
        const ms = performance.now() - started
        if (s < 0 || t === 0) continue
        if (pid !== undefined) windows.push([i, `${startedNs}`, `${process.hrtime.bigint()}`])
        times[i]?.push(ms)
        if (pid !== undefined) cpu[i] = (cpu[i] ?? 0) + (treeCpuMs([pid])[0] ?? 0) - before
      }
    }
  }
  if (values.windows) writeFileSync(values.windows, JSON.stringify(windows))
  const sorted = (a: number[]) => [...a].sort((x, y) => x - y)
  const at = (a: number[], q: number) => sorted(a)[Math.floor(a.length * q)] ?? Number.NaN
  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length
  const raw = times[times.length - 1] ?? []
  const rss = variants.map(({ pid }) => (pid === undefined ? '' : rssOf(pid)))
  console.log(
    `${SESSIONS} sessions × ${TURNS - 1} turns each (each variant after each other one as often; first turns left out)`,
  )
  for (const [i, { name, pid }] of variants.entries()) {
    const a = times[i] ?? []
    const server = pid === undefined ? '—' : ((cpu[i] ?? 0) / a.length).toFixed(2)
    console.log(
      `${name.padEnd(24)} mean ${mean(a).toFixed(2)} p50 ${at(a, 0.5).toFixed(2)} ` +
        `p90 ${at(a, 0.9).toFixed(2)} ms; × raw mean ${(mean(a) / mean(raw)).toFixed(2)} ` +
        `p50 ${(at(a, 0.5) / at(raw, 0.5)).toFixed(2)}; server CPU ms/turn ${server}${rss[i]}`,
    )
  }
} finally {
  for (const v of variants) await v.variant.close()
  if (PROBE) {
    for (const [i] of trees.entries()) {
      await copyFile(join(root, `rev-${i}`, 'server.log'), join(PROBE, `${i}.log`)).catch(() => {})
    }
  }
  await peers.close()
  for (const tree of trees) await tree.remove()
  await rm(root, { recursive: true, force: true })
}

/** This checkout as it is, its `entry` started (nothing extracted, nothing removed after). */
function thisCheckout(entry: string): BeforeTree {
  return { label: `. ${entry}`, root: resolve(import.meta.dirname, '..'), remove: async () => {} }
}

/** The server process's resident set now and at its peak (its runner apart), from /proc. */
function rssOf(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
  return `; RSS ${mb('VmRSS').toFixed(0)} MB (peak ${mb('VmHWM').toFixed(0)})`
}

/**
 * Orders of `n` variants for consecutive turns (n − 1 of them, repeated), such that across the
 * whole run, turn boundaries included, each variant runs right after each other one exactly as
 * often and never right after itself. (Rotating one order by one every turn, as this bench did
 * before, keeps each variant always right after the same other one: the same revision measured
 * 15 % faster by p50 run right after the raw loop than run right after the other server.)
 */
function balancedOrders(n: number): number[][] {
  const seq: number[] = []
  const used = new Set<string>()
  const length = n * (n - 1)
  const fill = (): boolean => {
    if (seq.length === length) return n < 2 || !used.has(`${seq[length - 1]}>${seq[0]}`)
    const block = seq.slice(seq.length - (seq.length % n))
    for (let v = 0; v < n; v++) {
      const edge = `${seq[seq.length - 1]}>${v}`
      if (block.includes(v) || (seq.length > 0 && used.has(edge))) continue
      if (seq.length > 0 && seq[seq.length - 1] === v) continue
      seq.push(v)
      if (seq.length > 1) used.add(edge)
      if (fill()) return true
      seq.pop()
      if (seq.length > 0) used.delete(edge)
    }
    return false
  }
  if (n < 2 || !fill()) return [Array.from({ length: n }, (_, i) => i)]
  return Array.from({ length: n - 1 }, (_, k) => seq.slice(k * n, (k + 1) * n))
}

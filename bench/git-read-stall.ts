/**
 * How long the runner's direct reading of a `.git` (`/v1/git/recent-log`) holds up its other
 * requests: the real runner process (as the contract tests start it) reads each of the most
 * expensive repositories a tenant can make within the reading's bounds
 * (test/support/git-read-worst.ts), while `GET /healthz` is asked every 5 ms; it prints the
 * reading's time and the slowest health answer during it (a request held by the reading waits
 * for the event loop). `--before <revision>` runs the same against that revision's runner.
 * Figures, not pass/fail: the machines are shared and noisy.
 *
 * Each revision gets repositories made for its bound on one object (1 MiB here; 4 MiB before
 * this bench was written: `--before-object-mib`). Each reading is also timed with no other
 * request, so the cost of pausing shows apart from the sharing of the machine's CPU.
 *
 *   npx tsx bench/git-read-stall.ts [--rounds 3] [--before main] [--before-object-mib 4]
 *     [--only thisRepository|looseBytes|deltaChain|indexSearches] [--this-first]
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { HttpSandboxRunner } from '../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../src/ports/sandbox-runner.ts'
import { WORST } from '../test/support/git-read-worst.ts'
import { startRunnerProcess } from '../test/support/runner-process.ts'
import { checkoutBefore } from './support/before-tree.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    before: { type: 'string' },
    'before-object-mib': { type: 'string', default: '4' },
    only: { type: 'string' },
    'this-first': { type: 'boolean', default: false },
  },
})
const ROUNDS = Number(values.rounds)
const secret = 'bench-git-read-stall-secret-0123456789'

async function health(url: string): Promise<number> {
  const started = performance.now()
  const res = await fetch(`${url}/healthz`)
  await res.arrayBuffer()
  return performance.now() - started
}

interface Figures {
  aloneMs: number
  readMs: number
  worstHealthMs: number
  state: string
}

async function measure(url: string, client: HttpSandboxRunner, scope: SandboxScope) {
  const alone = performance.now()
  await client.recentCommits(scope, { count: 5 })
  const aloneMs = performance.now() - alone
  let reading = true
  const healths: number[] = []
  const prober = (async () => {
    while (reading) {
      healths.push(await health(url))
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  const started = performance.now()
  const read = await client.recentCommits(scope, { count: 5 })
  const readMs = performance.now() - started
  reading = false
  await prober
  const state = read.ok ? read.value.state : 'refused'
  return { aloneMs, readMs, worstHealthMs: Math.max(...healths), state } satisfies Figures
}

async function runTree(label: string, tree: string, objectBytes: number) {
  const root = await mkdtemp(join(tmpdir(), 'turnline-git-stall-'))
  const runner = await startRunnerProcess({ root, secret, checkout: tree })
  const client = new HttpSandboxRunner({ url: runner.url, secret })
  try {
    for (const [name, build] of Object.entries(WORST)) {
      if (values.only && values.only !== name) continue
      const rows: Figures[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const scope: SandboxScope = { tenant: 'bench', sessionId: `${name}-${round}` }
        const made = await client.writeFile(scope, { path: 'README', content: 'x\n' })
        if (!made.ok) throw new Error(`refused: ${JSON.stringify(made.refusal)}`)
        await build(join(root, scope.tenant, scope.sessionId, '.git'), objectBytes)
        rows.push(await measure(runner.url, client, scope))
      }
      const ms = (key: 'aloneMs' | 'readMs' | 'worstHealthMs') =>
        median(rows.map((r) => r[key])).toFixed(0)
      console.log(
        `${label.padEnd(8)} ${name.padEnd(14)} read alone ${ms('aloneMs')} ms, with /healthz ` +
          `every 5 ms ${ms('readMs')} ms, slowest /healthz during it ${ms('worstHealthMs')} ms ` +
          `(medians of ${ROUNDS}; ${rows[0]?.state}; load ${loadavg()})`,
      )
    }
  } finally {
    await runner.stop()
    await rm(root, { recursive: true, force: true })
  }
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

const here = join(import.meta.dirname, '..')
const runs: (() => Promise<void>)[] = [() => runTree('HEAD', here, 1024 * 1024)]
if (values.before) {
  const revision = values.before
  const objectBytes = Number(values['before-object-mib']) * 1024 * 1024
  runs[values['this-first'] ? 'push' : 'unshift'](async () => {
    const before = await checkoutBefore(revision)
    try {
      await runTree(revision, before.root, objectBytes)
    } finally {
      await before.remove()
    }
  })
}
for (const run of runs) await run()

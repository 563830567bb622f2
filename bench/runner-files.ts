/**
 * What a file tool costs on the reference runner: `write_file` and `read_file` of a 4 KiB file at
 * the top of a workspace and four folders down, and an `apply_patch` update, each a signed HTTP
 * request to a runner in this process (as `npm start` embeds it), measured from the client.
 * `--before <git revision>[,…]` also starts the runner of each of those revisions (extracted by
 * bench/support/before-tree.ts) and interleaves the rounds, so a change is measured against its
 * parent under the same load. Figures, not pass/fail: the machines are shared and noisy.
 *
 *   npx tsx bench/runner-files.ts [--ops 300] [--rounds 5] [--before main]
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { HttpSandboxRunner } from '../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../src/ports/sandbox-runner.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
  },
})
const OPS = Number(values.ops)
const ROUNDS = Number(values.rounds)
const secret = 'bench-runner-files-secret-0123456789'
const here = join(import.meta.dirname, '..')

interface Variant {
  label: string
  client: HttpSandboxRunner
  close(): Promise<void>
}

type StartRunner = (options: { root: string; secret: string }) => Promise<{
  url: string
  close(): Promise<void>
}>

async function variant(label: string, tree: string, scratch: string): Promise<Variant> {
  const module = (await import(join(tree, 'adapters/runner/runner-server.ts'))) as {
    startRunner: StartRunner
  }
  const root = join(scratch, label.replace(/\W+/g, '-'))
  const runner = await module.startRunner({ root, secret })
  return {
    label,
    client: new HttpSandboxRunner({ url: runner.url, secret }),
    close: () => runner.close(),
  }
}

const content = `${'0123456789abcdef'.repeat(63)}\n`.repeat(4)
const scope: SandboxScope = { tenant: 'bench', sessionId: 'files' }

function ok<T>(result: { ok: true; value: T } | { ok: false; refusal: unknown }): T {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`)
  return result.value
}

const operations: Array<[string, (c: HttpSandboxRunner, i: number) => Promise<unknown>]> = [
  [
    'write top',
    async (c, i) =>
      ok(await c.writeFile(scope, { path: 'notes.txt', content: `${i}\n${content}` })),
  ],
  ['read top', async (c) => ok(await c.readFile(scope, { path: 'notes.txt' }))],
  [
    'write deep',
    async (c, i) =>
      ok(await c.writeFile(scope, { path: 'a/b/c/d/deep.txt', content: `${i}\n${content}` })),
  ],
  ['read deep', async (c) => ok(await c.readFile(scope, { path: 'a/b/c/d/deep.txt' }))],
  [
    'patch update',
    async (c, i) =>
      ok(
        await c.applyPatch(
          scope,
          `*** Begin Patch\n*** Update File: a/b/c/d/deep.txt\n@@\n-${i}\n+${i + 1}\n*** End Patch`,
        ),
      ),
  ],
]

const scratch = await mkdtemp(join(tmpdir(), 'turnline-bench-files-'))
await chmod(scratch, 0o711) // the sandbox user's way to the workspaces
const trees: BeforeTree[] = []
for (const revision of values.before?.split(',') ?? []) trees.push(await checkoutBefore(revision))
const variants = [
  await variant('this tree', here, scratch),
  ...(await Promise.all(trees.map((t) => variant(t.label, t.root, scratch)))),
]
const samples = new Map<string, number[]>()
try {
  for (let round = 0; round <= ROUNDS; round++) {
    for (const v of variants) {
      // The patch rewrites the file the writes leave: start each round from a known text.
      for (const [name, run] of operations) {
        for (let i = 0; i < OPS; i++) {
          if (name === 'patch update' && i === 0) await operations[2]?.[1](v.client, 0)
          const began = performance.now()
          await run(v.client, i)
          const took = (performance.now() - began) * 1000
          // Round 0 warms up (JIT, page cache, folders made).
          if (round > 0)
            samples.set(`${name}|${v.label}`, [...(samples.get(`${name}|${v.label}`) ?? []), took])
        }
      }
    }
  }
  process.stderr.write(
    `${OPS} requests per operation and round, ${ROUNDS} rounds (µs per request)\n`,
  )
  process.stderr.write(
    `${'operation'.padEnd(14)}${'runner'.padEnd(24)}${'median'.padStart(8)}${'p90'.padStart(8)}\n`,
  )
  for (const [name] of operations) {
    for (const v of variants) {
      const all = samples.get(`${name}|${v.label}`) ?? []
      const row = `${name.padEnd(14)}${v.label.padEnd(24)}`
      process.stderr.write(
        `${row}${median(all).toFixed(0).padStart(8)}${percentile(all, 90).toFixed(0).padStart(8)}\n`,
      )
    }
  }
} finally {
  for (const v of variants) await v.close()
  for (const t of trees) await t.remove()
  await rm(scratch, { recursive: true, force: true })
}

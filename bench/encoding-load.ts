/**
 * CPU and memory of loading one tokenizer encoding in isolation: a fresh Node process per run
 * (tsx, as `npm start` from a clone), timed from before `loadTokenizer(encoding)` to its first
 * count, against another source tree (`--before`: a revision checked out in a temporary
 * worktree), interleaved, medians. Where the tree has functions/entries/rank-table-files.ts, the
 * run reads the committed rank tables as the Node entry does; otherwise it loads gpt-tokenizer's
 * encoding as that revision did. Also the heap and the process's resident memory grown by the
 * load (after a full GC), and the CPU of counting a 400 KB text (this checkout's docs, the same
 * for every tree) once the encoding is loaded.
 *
 *   npx tsx bench/encoding-load.ts [--runs 7] [--encoding o200k_base] [--before <rev>]
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    encoding: { type: 'string', default: 'o200k_base' },
    before: { type: 'string' },
  },
})
const root = join(import.meta.dirname, '..')
const scratch = mkdtempSync(join(tmpdir(), 'encoding-load-'))

/** The child: one load, printed as JSON. */
function childScript(tree: string): string {
  return `
import { existsSync, readFileSync, readdirSync } from 'node:fs'
const tree = ${JSON.stringify(tree)}
const { loadTokenizer, useRankTables } = await import(tree + '/src/core/compaction/bpe-tokenizer.ts')
if (useRankTables && existsSync(tree + '/functions/entries/rank-table-files.ts')) {
  useRankTables((await import(tree + '/functions/entries/rank-table-files.ts')).rankTableFiles)
}
// The same text for every tree: this checkout's docs.
const docs = ${JSON.stringify(join(root, 'docs'))}
const text = readdirSync(docs).filter((n) => n.endsWith('.md'))
  .map((n) => readFileSync(docs + '/' + n, 'utf8')).join('\\n').slice(0, 400_000)
globalThis.gc(); globalThis.gc()
const heap0 = process.memoryUsage().heapUsed, rss0 = process.memoryUsage().rss
const cpu0 = process.cpuUsage()
const tokenizer = await loadTokenizer(${JSON.stringify(values.encoding)})
tokenizer.count('hello world')
const cpu1 = process.cpuUsage(cpu0)
globalThis.gc(); globalThis.gc()
const heap1 = process.memoryUsage().heapUsed, rss1 = process.memoryUsage().rss
const cpu2 = process.cpuUsage()
const tokens = tokenizer.count(text)
const cpu3 = process.cpuUsage(cpu2)
console.log(JSON.stringify({
  loadMs: (cpu1.user + cpu1.system) / 1000,
  heapMb: (heap1 - heap0) / 1e6,
  rssMb: (rss1 - rss0) / 1e6,
  countMs: (cpu3.user + cpu3.system) / 1000,
  chars: text.length,
  tokens,
}))
`
}

interface Run {
  loadMs: number
  heapMb: number
  rssMb: number
  countMs: number
  chars: number
  tokens: number
}

function runOnce(tree: string, name: string): Run {
  const file = join(scratch, `${name}.mts`)
  writeFileSync(file, childScript(tree))
  const out = execFileSync(join(root, 'node_modules/.bin/tsx'), ['--expose-gc', file], {
    cwd: tree,
    encoding: 'utf8',
  })
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as Run
}

const trees: [string, string][] = [['this tree', root]]
if (values.before) {
  const dir = join(scratch, 'before')
  execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', dir, values.before], {
    stdio: 'ignore',
  })
  execFileSync('cp', ['-al', join(root, 'node_modules'), join(dir, 'node_modules')])
  trees.unshift([`before (${values.before})`, dir])
}
try {
  const runs = new Map<string, Run[]>(trees.map(([name]) => [name, []]))
  for (let i = 0; i < Number(values.runs); i++) {
    for (const [name, tree] of trees) runs.get(name)?.push(runOnce(tree, name.split(' ')[0] ?? 'x'))
  }
  console.log(
    `${values.encoding}, medians of ${values.runs} fresh processes (load average ${(await import('node:os')).loadavg()[0]?.toFixed(1)})`,
  )
  for (const [name, list] of runs) {
    const m = (key: keyof Run) => median(list.map((run) => run[key])).toFixed(1)
    console.log(
      `  ${name.padEnd(24)} load ${m('loadMs')} ms CPU (range ${Math.min(...list.map((r) => r.loadMs)).toFixed(0)}–${Math.max(...list.map((r) => r.loadMs)).toFixed(0)}), heap +${m('heapMb')} MB, rss +${m('rssMb')} MB; counting ${list[0]?.chars} chars (${list[0]?.tokens} tokens): ${m('countMs')} ms CPU`,
    )
  }
} finally {
  if (values.before) {
    execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', join(scratch, 'before')])
  }
  rmSync(scratch, { recursive: true, force: true })
}

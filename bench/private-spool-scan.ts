/**
 * What counting private spools and sweeping them adds to the runner's disk bookkeeping:
 *
 *   npx tsx bench/private-spool-scan.ts [--sessions 2000] [--spools 2000]
 *
 * One tenant with N sessions, each a workspace of 5 small files and a state folder holding one
 * finished command's claim and record; M of them (spread among the sessions) also hold that
 * command's unclosed private spool, the others had theirs closed. Times, median of 9 runs each:
 * the `du` walk of the workspaces that every disk measurement makes (disk-usage.ts), the count
 * of the private spools it adds (PrivateSpoolIndex.bytes; and, as the baseline, that count as it
 * was made before, reading every session's `spools/`), one sweep pass that removes nothing
 * (grace not reached, private-spool-sweep.ts), and the walk that finds the spools when the
 * runner starts (PrivateSpoolIndex.ready, once per start). Figures, not pass/fail.
 */
import { lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { measureWorkspaces } from '../adapters/runner/disk-usage.ts'
import { inBatches, PrivateSpoolIndex } from '../adapters/runner/private-spool-index.ts'
import { PrivateSpoolSweep } from '../adapters/runner/private-spool-sweep.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '2000' },
    spools: { type: 'string' },
  },
})
const sessions = Number(values.sessions)
const spoolCount = Math.min(sessions, Number(values.spools ?? sessions))
const RUNS = 9

const root = await mkdtemp(join(tmpdir(), 'turnline-spool-scan-'))
const workspaces: string[] = []
for (let i = 0; i < sessions; i++) {
  const workspace = join(root, 'acme', `s-${i}`)
  workspaces.push(workspace)
  await mkdir(workspace, { recursive: true })
  for (let f = 0; f < 5; f++) await writeFile(join(workspace, `file-${f}.txt`), 'x'.repeat(2000))
  const state = join(root, '.runner-state', 'acme', `s-${i}`)
  for (const folder of ['spools', 'exec', 'requests']) {
    await mkdir(join(state, folder), { recursive: true })
  }
  const id = `run-${i.toString(16).padStart(24, '0')}`
  // Spools spread evenly: session i holds one when the count steps up there.
  if (Math.floor(((i + 1) * spoolCount) / sessions) > Math.floor((i * spoolCount) / sessions)) {
    await writeFile(join(state, 'spools', `write_stdin_${id}.txt`), 'hook-answer\n')
  }
  const record = { version: 1, exec_session_id: id, request_id: id, tool_call_id: id }
  const done = {
    command: 'true',
    workdir: '.',
    backend: 'pipe',
    spool_path: `write_stdin_${id}.txt`,
  }
  const exit = { spool_private: true, started_at: 1, exit_code: 0, exited_at: Date.now() }
  await writeFile(
    join(state, 'exec', `${id}.json`),
    JSON.stringify({ ...record, ...done, ...exit }),
  )
  await writeFile(join(state, 'requests', `${id}.json`), JSON.stringify({ exec_session_id: id }))
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const began = performance.now()
    await run()
    times.push(performance.now() - began)
  }
  return median(times)
}

/** The count as it was before the index: every session's `spools/` read, 32 side by side. */
async function everySessionRead(): Promise<number> {
  const tenantState = join(root, '.runner-state', 'acme')
  const names = (dir: string) => readdir(dir).catch(() => [] as string[])
  let bytes = 0
  await inBatches(await names(tenantState), async (session) => {
    const spools = join(tenantState, session, 'spools')
    for (const name of await names(spools)) {
      const stats = await lstat(join(spools, name)).catch(() => undefined)
      if (stats?.isFile()) bytes += stats.blocks * 512
    }
  })
  return bytes
}

const index = new PrivateSpoolIndex(root)
const sweep = new PrivateSpoolSweep({
  root,
  index,
  graceMs: 3_600_000,
  writing: () => new Set(),
  removed: () => {
    throw new Error('nothing is past the grace')
  },
  log: () => {},
})
const walk = await timed(() => new PrivateSpoolIndex(root).ready())
await index.ready()
if (index.all().length !== spoolCount) throw new Error(`indexed ${index.all().length}`)
const du = await timed(() => measureWorkspaces(workspaces, undefined, 600_000))
const spools = await timed(() => index.bytes('acme'))
const before = await timed(everySessionRead)
const pass = await timed(() => sweep.sweep())
await rm(root, { recursive: true, force: true })

const ms = (value: number) => `${value.toFixed(1)} ms`
const ratio = (value: number) => `${(value / du).toFixed(2)}x du`
console.log(`${sessions} sessions, ${spoolCount} private spools, median of ${RUNS}:`)
console.log(`  du of the workspaces (each measurement):  ${ms(du)}`)
console.log(`  private spools counted (added to it):     ${ms(spools)}  ${ratio(spools)}`)
console.log(`  the same, every session read (before):   ${ms(before)}  ${ratio(before)}`)
console.log(`  one sweep pass, nothing removed:          ${ms(pass)}  ${ratio(pass)}`)
console.log(`  walk finding the spools (once a start):   ${ms(walk)}  ${ratio(walk)}`)

/**
 * What counting private spools and sweeping them adds to the runner's disk bookkeeping:
 *
 *   npx tsx bench/private-spool-scan.ts [--sessions 2000]
 *
 * One tenant with N sessions, each a workspace of 5 small files and a state folder holding one
 * finished command's record and private spool. Times, median of 9 runs each: the `du` walk of
 * the workspaces that every disk measurement makes (disk-usage.ts), the count of the private
 * spools it now adds (private-spool-usage.ts), and one sweep pass that removes nothing (grace
 * not reached, private-spool-sweep.ts). Figures, not pass/fail.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { measureWorkspaces } from '../adapters/runner/disk-usage.ts'
import { PrivateSpoolSweep } from '../adapters/runner/private-spool-sweep.ts'
import { privateSpoolBytes } from '../adapters/runner/private-spool-usage.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '2000' } } })
const sessions = Number(values.sessions)
const RUNS = 9

const root = await mkdtemp(join(tmpdir(), 'turnline-spool-scan-'))
const workspaces: string[] = []
for (let i = 0; i < sessions; i++) {
  const workspace = join(root, 'acme', `s-${i}`)
  workspaces.push(workspace)
  await mkdir(workspace, { recursive: true })
  for (let f = 0; f < 5; f++) await writeFile(join(workspace, `file-${f}.txt`), 'x'.repeat(2000))
  const state = join(root, '.runner-state', 'acme', `s-${i}`)
  await mkdir(join(state, 'spools'), { recursive: true })
  await mkdir(join(state, 'exec'), { recursive: true })
  const id = `run-${i.toString(16).padStart(24, '0')}`
  await writeFile(join(state, 'spools', `write_stdin_${id}.txt`), 'hook-answer\n')
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

const sweep = new PrivateSpoolSweep({
  root,
  graceMs: 3_600_000,
  writing: () => new Set(),
  removed: () => {
    throw new Error('nothing is past the grace')
  },
  log: () => {},
})
const du = await timed(() => measureWorkspaces(workspaces, undefined, 600_000))
const spools = await timed(() => privateSpoolBytes(root, 'acme'))
const pass = await timed(() => sweep.sweep())
await rm(root, { recursive: true, force: true })

const ms = (value: number) => `${value.toFixed(1)} ms`
console.log(`${sessions} sessions, median of ${RUNS}:`)
console.log(`  du of the workspaces (each measurement):  ${ms(du)}`)
console.log(
  `  private spools counted (added to it):     ${ms(spools)}  ${(spools / du).toFixed(2)}x du`,
)
console.log(
  `  one sweep pass, nothing removed:          ${ms(pass)}  ${(pass / du).toFixed(2)}x du`,
)

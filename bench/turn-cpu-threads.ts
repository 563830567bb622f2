/**
 * The server's CPU per steady turn, thread by thread: `npm start` as its own process (as
 * bench/turn-cost-user.ts starts it, against the mock and receiver processes), one warm-up
 * session, then `--sessions` × `--turns` turns, one after another; each thread of the server's
 * process tree (the embedded runner and its children included) read from /proc before and after.
 * First turns are included (a session's start is part of a steady run); `--idle` seconds with no
 * turn are measured after it, to tell work a turn causes from work done on timers.
 *
 * With `--strace <file>`, every thread of the tree is traced (`strace -f`, one line per call,
 * each with its thread id) over the sessions' steady turns; count them with `sort | uniq -c`.
 * With `--log <file>`, the server's output (e.g. V8's traces under `--node-args='--trace-opt'`)
 * is kept there, and `<file>.sessions` gives the log's length in bytes as each session started.
 * With `--blocks <n>`, the steady turns are printed per block of sessions/n sessions.
 *
 *   npx tsx bench/turn-cpu-threads.ts [--revision HEAD] [--sessions 30] [--turns 20] [--idle 10]
 *     [--strace <file>] [--log <file>] [--blocks 1] [--node-args '…']
 */
import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { benchDataDir } from './support/bench-data-dir.ts'
import { startPeerProcesses } from './support/peer-processes.ts'
import { type ThreadCpu, threadCpu, threadCpuSince } from './support/thread-cpu.ts'
import { serverEntry } from './support/user-path-variants.ts'

const { values } = parseArgs({
  options: {
    revision: { type: 'string', default: 'HEAD' },
    sessions: { type: 'string', default: '30' },
    turns: { type: 'string', default: '20' },
    idle: { type: 'string', default: '10' },
    strace: { type: 'string' },
    log: { type: 'string' },
    blocks: { type: 'string', default: '1' },
    'node-args': { type: 'string', default: '' },
  },
})
const nodeArgs = values['node-args'].split(' ').filter(Boolean)
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)
const IDLE_S = Number(values.idle)
const BLOCKS = Number(values.blocks)
const root = await mkdtemp(join(benchDataDir(), 'turn-cpu-threads-'))
// As in turn-cost-user.ts: the sandbox user must reach the runners' workspaces (mkdtemp is 0700).
await chmod(root, 0o711)
const peers = await startPeerProcesses(true)
let tree: BeforeTree | undefined
try {
  tree = await checkoutBefore(values.revision)
  const dir = join(root, 'server')
  await mkdir(dir)
  const entry = await serverEntry(tree.label, peers, dir, tree.root, ['infra/start.mjs'], nodeArgs)
  const pid = entry.pid as number
  const warm = await entry.variant.newSession(-1)
  for (let t = 0; t < TURNS; t++) await warm.turn(`step ${t + 1}`, `warm-${t}`)
  const steady = new Map<string, ThreadCpu>()
  const starts = new Map<string, ThreadCpu>()
  const started = performance.now()
  const logAt: number[] = []
  for (let s = 0; s < SESSIONS; s++) {
    logAt.push(statSync(join(dir, 'server.log')).size)
    const atStart = threadCpu(pid)
    const session = await entry.variant.newSession(s)
    await session.turn('step 1', `s${s}-0`)
    const atSteady = threadCpu(pid)
    add(starts, threadCpuSince(atStart, atSteady))
    const tracer = values.strace === undefined ? undefined : await trace(atSteady, values.strace)
    for (let t = 1; t < TURNS; t++) await session.turn(`step ${t + 1}`, `s${s}-${t}`)
    await tracer?.stop()
    add(steady, threadCpuSince(atSteady, threadCpu(pid)))
    const block = SESSIONS / BLOCKS
    if (BLOCKS > 1 && (s + 1) % block === 0) {
      print(
        `sessions ${s + 2 - block}-${s + 1}: steady turns, ms of CPU per turn`,
        [...steady.values()],
        block * (TURNS - 1),
      )
      steady.clear()
    }
  }
  const seconds = (performance.now() - started) / 1000
  const turns = SESSIONS * (TURNS - 1)
  if (BLOCKS === 1)
    print(
      `${turns} steady turns (${SESSIONS} sessions, ${seconds.toFixed(1)} s in all), ms of CPU per turn`,
      [...steady.values()],
      turns,
    )
  print(
    `${SESSIONS} session starts and first turns, ms of CPU per session`,
    [...starts.values()],
    SESSIONS,
  )
  const idleBefore = threadCpu(pid)
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000))
  const idle = threadCpuSince(idleBefore, threadCpu(pid))
  print(
    `idle ${IDLE_S} s, ms of CPU per second (x ${seconds.toFixed(1)} s / ${turns} turns = per turn of the run)`,
    idle,
    IDLE_S,
  )
  await entry.variant.close()
  if (values.log !== undefined) {
    await copyFile(join(dir, 'server.log'), values.log)
    await writeFile(`${values.log}.sessions`, `${JSON.stringify(logAt)}\n`)
  }
} finally {
  await peers.close()
  await tree?.remove()
  await rm(root, { recursive: true, force: true })
}

/** strace -f on every process of the tree, its lines appended to `file`, until stopped. */
async function trace(tree: Map<string, ThreadCpu>, file: string) {
  const pids = new Set([...tree.keys()].map((key) => key.split(':')[0] as string))
  const args = ['-f', '-qq', '-o', `${file}.${Date.now()}`, ...[...pids].flatMap((p) => ['-p', p])]
  const child = spawn('strace', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  await new Promise((resolve) => setTimeout(resolve, 500)) // attached by then
  return {
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGINT')
      await exited
    },
  }
}

function add(into: Map<string, ThreadCpu>, used: ThreadCpu[]): void {
  for (const u of used) {
    const key = `${u.process}|${u.thread}`
    const had = into.get(key)
    into.set(key, { ...u, ms: (had?.ms ?? 0) + u.ms })
  }
}

function print(title: string, used: ThreadCpu[], per: number): void {
  console.log(`\n${title}`)
  console.log('| process | thread | ms |')
  console.log('|---|---|---|')
  let total = 0
  for (const u of used) {
    total += u.ms
    console.log(`| ${u.process} | ${u.thread} | ${(u.ms / per).toFixed(3)} |`)
  }
  console.log(`| total | | ${(total / per).toFixed(3)} |`)
}

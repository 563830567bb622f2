/**
 * The fs store's share of a checkpoint turn, next to an earlier revision's, in one interleaved
 * run: SessionStore on the fs store (durable), each tool turn committed as the engine commits it
 * — the batch before the tools (`maintain: false`, its append left running), then the final
 * batch with its upkeep (`overlapManifest`, settled once the manifest is written) — and the
 * final commit timed from its call to the manifest written. Every 16 batches (the 8th and 16th
 * turn of a session) that commit also writes a checkpoint, brings events.jsonl up to date and
 * compare-and-swaps the manifest: those are the checkpoint commits, the others ordinary. Each
 * turn is taken by each revision in turn (the order alternated), sessions of `--turns` turns,
 * a batch's events and transcript the size of a bench tool turn's. Prints medians (and p90) in
 * ms and the ratio this checkout ÷ the earlier revision. Figures, not pass/fail.
 *
 *   npx tsx bench/checkpoint-commit.ts [--before main] [--sessions 40] [--turns 20]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { ThreadEvent } from '../src/contract/thread-event.ts'
import type { SessionStore } from '../src/store/session-store.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { benchDataDir } from './support/bench-data-dir.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: 'main' },
    sessions: { type: 'string', default: '40' },
    turns: { type: 'string', default: '20' },
  },
})
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)

interface Subject {
  label: string
  sessions: SessionStore
  times: { checkpoint: number[]; ordinary: number[] }
}

type Trees = {
  SessionStore: new (o: object) => SessionStore
  FsObjectStore: new (o: object) => unknown
}

async function load(root: string): Promise<Trees> {
  const { SessionStore } = await import(join(root, 'src/store/session-store.ts'))
  const { FsObjectStore } = await import(join(root, 'adapters/fs/fs-object-store.ts'))
  return { SessionStore, FsObjectStore }
}

const text = (n: number, size: number) => `${n} ${'x'.repeat(size)}`

/** A tool turn's two batches: the model's call (before the tool), then its result and answer. */
function toolTurn(n: number): { call: ThreadEvent[]; end: ThreadEvent[] } {
  const usage = {
    input_tokens: 4000,
    cached_input_tokens: 0,
    cache_creation_tokens: 0,
    output_tokens: 20,
  }
  const invocation = { id: `c${n}`, type: 'tool_invocation', tool_name: 'lookup' }
  const args = { arguments: { q: text(n, 20) }, tool_call_id: `call_${n}` }
  return {
    call: [
      { type: 'turn.started' },
      { type: 'item.completed', item: { ...invocation, ...args, status: 'completed' } },
    ] as ThreadEvent[],
    end: [
      {
        type: 'item.completed',
        item: {
          id: `o${n}`,
          type: 'tool_output',
          call_id: `c${n}`,
          output: text(n, 300),
          status: 'completed',
        },
      },
      { type: 'item.completed', item: { id: `a${n}`, type: 'agent_message', text: text(n, 200) } },
      { type: 'turn.completed', usage },
    ] as ThreadEvent[],
  }
}

async function turn(s: Subject, ref: object, n: number): Promise<void> {
  const { call, end } = toolTurn(n)
  const opened = await s.sessions.open(ref as never)
  const history = { append: [{ role: 'user' as const, content: text(n, 100) }] }
  const mid = await s.sessions.commit(
    opened,
    { events: call, history },
    { maintain: false, deferAppend: true },
  )
  const started = performance.now()
  const done = await s.sessions.commit(
    mid.snapshot,
    { events: end, history: { append: [{ role: 'assistant' as const, content: text(n, 200) }] } },
    { overlapManifest: true },
  )
  const failed = (await done.manifestWritten) ?? done.maintenanceError
  if (failed) throw failed
  const ms = performance.now() - started
  const checkpointing = done.snapshot.batchesSinceCheckpoint === 0
  s.times[checkpointing ? 'checkpoint' : 'ordinary'].push(ms)
}

const scratch = await mkdtemp(join(benchDataDir(), 'checkpoint-commit-'))
let before: BeforeTree | undefined
try {
  before = await checkoutBefore(values.before)
  const subjects: Subject[] = []
  for (const [label, root] of [
    ['this checkout', join(import.meta.dirname, '..')],
    [before.label, before.root],
  ] as const) {
    const trees = await load(root)
    const store = new trees.FsObjectStore({ root: join(scratch, String(subjects.length)) })
    const sessions = new trees.SessionStore({ store })
    subjects.push({ label, sessions, times: { checkpoint: [], ordinary: [] } })
  }
  for (let s = -1; s < SESSIONS; s++) {
    const ref = { tenant: 'bench', workspace: 'w', sessionId: `session-${s + 1}` }
    for (const subject of subjects) {
      const started: ThreadEvent = { type: 'thread.started', thread_id: `t${s}` }
      await subject.sessions.create(ref, `t${s}`, { events: [started] })
    }
    for (let n = 1; n <= TURNS; n++) {
      const order = (s + n) % 2 === 0 ? subjects : [...subjects].reverse()
      for (const subject of order) {
        const record = s >= 0
        const times = subject.times
        const kept = { checkpoint: times.checkpoint.length, ordinary: times.ordinary.length }
        await turn(subject, ref, n)
        if (!record) {
          times.checkpoint.length = kept.checkpoint
          times.ordinary.length = kept.ordinary
        }
      }
    }
  }
  const [now, then] = subjects as [Subject, Subject]
  console.log(
    `fs store, final commit of a tool turn to its manifest written, ${SESSIONS} sessions × ${TURNS} turns`,
  )
  console.log(`ms, median (p90)           ${now.label.padEnd(20)} ${then.label.padEnd(20)} ratio`)
  for (const kind of ['ordinary', 'checkpoint'] as const) {
    const cell = (xs: number[]) =>
      `${median(xs).toFixed(3)} (${percentile(xs, 90).toFixed(3)})`.padEnd(20)
    const a = now.times[kind]
    const b = then.times[kind]
    console.log(
      `${`${kind} (${a.length})`.padEnd(26)} ${cell(a)} ${cell(b)} ${(median(a) / median(b)).toFixed(2)}`,
    )
  }
  const extra = (s: Subject) => median(s.times.checkpoint) - median(s.times.ordinary)
  console.log(
    `checkpoint − ordinary      ${extra(now).toFixed(3).padEnd(20)} ${extra(then).toFixed(3).padEnd(20)}`,
  )
} finally {
  await before?.remove()
  await rm(scratch, { recursive: true, force: true })
}

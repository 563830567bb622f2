/**
 * Session-store benchmark: appends a 500-turn session (≈20 events a turn) to the fs adapter and
 * to S3 (moto_server on loopback, when `npm run services:start` is running or TURNLINE_TEST_S3_*
 * is set) and prints object requests per turn, write amplification and rehydration time at
 * turn 10 vs turn 500. Figures, not pass/fail: the machines are shared and noisy.
 *
 *   npx tsx bench/store-append.ts [--turns 500] [--adapters fs,s3]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { FsObjectStore } from '../adapters/fs/fs-object-store.ts'
import { countingObjectStore } from '../adapters/memory/counting-object-store.ts'
import { serializeVersionedLine } from '../src/contract/serialize.ts'
import type { ThreadEvent } from '../src/contract/thread-event.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { SessionStore } from '../src/store/session-store.ts'
import { benchS3Store } from './support/bench-s3.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '500' },
    adapters: { type: 'string', default: 'fs,s3' },
  },
})
const TURNS = Number(values.turns)

/** One realistic turn: streamed message snapshots, two tool calls with output, completion. */
function turn(n: number): ThreadEvent[] {
  const text = `Turn ${n}: ${'the quick brown fox jumps over the lazy dog. '.repeat(4)}`
  const events: ThreadEvent[] = [{ type: 'turn.started' }]
  for (let t = 0; t < 2; t++) {
    const id = `item_${n * 10 + t}`
    const call = {
      id,
      type: 'tool_invocation',
      tool_name: 'exec_command',
      arguments: { cmd: `ls src/${t}` },
      tool_call_id: `call_${n}_${t}`,
    }
    events.push({ type: 'item.started', item: { ...call, status: 'in_progress' } } as ThreadEvent)
    events.push({
      type: 'item.completed',
      item: { ...call, status: 'completed', outcome: 'success' },
    } as ThreadEvent)
    const out = {
      id: `${id}:output`,
      type: 'tool_output',
      call_id: id,
      tool_call_id: `call_${n}_${t}`,
    }
    events.push({
      type: 'item.started',
      item: { ...out, output: '', status: 'in_progress' },
    } as ThreadEvent)
    events.push({
      type: 'item.completed',
      item: { ...out, output: 'a.ts\nb.ts\nc.ts\n'.repeat(6), exit_code: 0, status: 'completed' },
    } as ThreadEvent)
  }
  const msg = `item_${n * 10 + 9}`
  for (let i = 1; i <= 10; i++) {
    events.push({
      type: i === 1 ? 'item.started' : 'item.updated',
      item: { id: msg, type: 'agent_message', text: text.slice(0, (text.length * i) / 10) },
    })
  }
  events.push({ type: 'item.completed', item: { id: msg, type: 'agent_message', text } })
  events.push({
    type: 'turn.completed',
    usage: {
      input_tokens: 1200 + n,
      cached_input_tokens: 800,
      cache_creation_tokens: 0,
      output_tokens: 90,
    },
  })
  return events
}

async function timeRehydrate(
  store: ObjectStore,
  ref: { tenant: string; workspace: string; sessionId: string },
) {
  const samples: number[] = []
  for (let i = 0; i < 15; i++) {
    const fresh = new SessionStore({ store, cacheSize: 0 })
    const t0 = performance.now()
    await fresh.open(ref)
    samples.push(performance.now() - t0)
  }
  return median(samples)
}

async function run(name: string, base: ObjectStore) {
  const counted = countingObjectStore(base)
  const sessions = new SessionStore({ store: counted.store })
  const ref = { tenant: 'bench', workspace: 'ws', sessionId: `s-${Date.now()}` }
  let eventBytes = 0
  const count = (events: ThreadEvent[]) => {
    for (const e of events)
      eventBytes += new TextEncoder().encode(serializeVersionedLine(e)).byteLength + 1
  }
  const start: ThreadEvent[] = [{ type: 'thread.started', thread_id: ref.sessionId }]
  count(start)
  await sessions.create(ref, ref.sessionId, { events: start as [ThreadEvent] })
  let commitGets = 0,
    commitPuts = 0,
    commitLists = 0,
    turnGets = 0,
    turnLists = 0
  let rehydrate10 = 0
  for (let n = 1; n <= TURNS; n++) {
    const events = turn(n)
    count(events)
    const before = counted.snapshot()
    const snapshot = await sessions.open(ref)
    const mid = counted.snapshot()
    await sessions.commit(snapshot, {
      events,
      history: {
        append: [
          { role: 'user', content: `request ${n}` },
          { role: 'assistant', content: `answer ${n}` },
        ],
      },
      state: { usage_total: n },
    })
    const after = counted.snapshot()
    turnGets += mid.get - before.get
    turnLists += mid.list - before.list
    commitGets += after.get - mid.get
    commitPuts += after.put - mid.put
    commitLists += after.list - mid.list
    if (n === 10) rehydrate10 = await timeRehydrate(base, ref)
  }
  const rehydrateN = await timeRehydrate(base, ref)
  const written = counted.counts.bytesWritten
  const perTurn = (x: number) => (x / TURNS).toFixed(2)
  console.log(
    `\n${name}: ${TURNS} turns, ${(eventBytes / TURNS / 1024).toFixed(1)} KiB of events a turn`,
  )
  console.log(
    `  commit requests per turn: PUT ${perTurn(commitPuts)}  GET ${perTurn(commitGets)}  LIST ${perTurn(commitLists)}  (total ${perTurn(commitPuts + commitGets + commitLists)}; target ≤ 3)`,
  )
  console.log(`  warm open per turn:       GET ${perTurn(turnGets)}  LIST ${perTurn(turnLists)}`)
  console.log(
    `  write amplification:      ${(written / eventBytes).toFixed(2)} (bytes written ${written} / event bytes ${eventBytes}; target ≤ 3)`,
  )
  console.log(
    `  cold rehydrate median:    turn 10 ${rehydrate10.toFixed(2)} ms, turn ${TURNS} ${rehydrateN.toFixed(2)} ms, ratio ${(rehydrateN / rehydrate10).toFixed(2)} (target ≤ 1.5)`,
  )
}

for (const adapter of values.adapters.split(',')) {
  if (adapter === 'fs') {
    const dir = await mkdtemp(join(tmpdir(), 'turnline-bench-'))
    try {
      await run('fs', new FsObjectStore({ root: dir }))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  } else if (adapter === 's3') {
    const s3 = await benchS3Store()
    try {
      await run('s3 (moto_server)', s3.store)
    } finally {
      await s3.destroy()
    }
  } else {
    throw new Error(`unknown adapter ${adapter}`)
  }
}

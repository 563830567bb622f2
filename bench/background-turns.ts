/**
 * Background turns on one `npm start` (the fs store, its own worker), with a model that answers
 * at once: how many background turns one process starts and finishes per second, and how long
 * a client waits from the 202 to the first event of its turn on the events feed.
 *
 *   npx tsx bench/background-turns.ts [--turns 200] [--clients 16] [--probes 30]
 *
 * Throughput: `--turns` sessions, then one background turn each, sent by `--clients` clients at
 * once; figures: 202s per second (recording), and turns run to their outcome per second (from
 * the first request until the last session shows its answer). Delay: `--probes` turns one after
 * another, each with its session's events feed open first (NDJSON, `follow=1`,
 * TURNLINE_FOLLOW_POLL_MS=50, its least: the feed looks for new batches that often), measured from the 202
 * to the feed's first line (`turn.started`); median and p90. Figures, not pass/fail.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startMockOpenAI } from '../test/support/mock-openai.ts'
import { startServerProcess } from './support/server-process.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '200' },
    clients: { type: 'string', default: '16' },
    probes: { type: 'string', default: '30' },
  },
})
const TURNS = Number(values.turns)
const CLIENTS = Number(values.clients)
const PROBES = Number(values.probes)

const mock = await startMockOpenAI()
mock.respond(() => ({ text: 'Done.' }))
const server = await startServerProcess({
  cwd: join(import.meta.dirname, '..'),
  argv: ['infra/start.mjs'],
  dir: mkdtempSync(join(tmpdir(), 'turnline-bench-bg-')),
  env: {
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-bench',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_LOG: 'off',
    TURNLINE_FOLLOW_POLL_MS: '50',
  },
})

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const json = (await response.json()) as Record<string, unknown>
  if (response.status >= 300 && response.status !== 202) {
    throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  }
  return json
}

const newSession = async () => (await post('/v1/sessions', {})).session_id as string
const background = (session: string, n: number) =>
  post(`/v1/sessions/${session}/turns`, { input: `turn ${n}` }, { prefer: 'respond-async' })

/** Runs `task` over `items` with `clients` at a time. */
async function spread<T>(items: T[], clients: number, task: (item: T) => Promise<void>) {
  let next = 0
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T)
  }
  await Promise.all(Array.from({ length: clients }, worker))
}

async function turnCount(session: string): Promise<number> {
  const response = await fetch(`${server.url}/v1/sessions/${session}`)
  return ((await response.json()) as { turn_count: number }).turn_count
}

/** Throughput: every session gets one background turn; waits until all have run. */
async function throughput() {
  const sessions: string[] = []
  await spread(
    Array.from({ length: TURNS }, (_, i) => i),
    CLIENTS,
    async () => {
      sessions.push(await newSession())
    },
  )
  const started = performance.now()
  await spread(sessions, CLIENTS, async (session) => {
    await background(session, 1)
  })
  const accepted = performance.now()
  let left = [...sessions]
  while (left.length > 0) {
    const counts = await Promise.all(left.map(async (s) => [s, await turnCount(s)] as const))
    left = counts.filter(([, count]) => count < 1).map(([s]) => s)
    if (left.length > 0) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const done = performance.now()
  return {
    acceptedPerSecond: TURNS / ((accepted - started) / 1000),
    finishedPerSecond: TURNS / ((done - started) / 1000),
  }
}

/** One probe: the feed open, a background turn, ms from its 202 to the feed's first line. */
async function firstEventDelay(session: string, n: number): Promise<number> {
  // A new session: seq 0 is thread.started, so the feed's first line after it is the turn's.
  const feed = await fetch(`${server.url}/v1/sessions/${session}/events?after=0&follow=1`)
  const reader = feed.body?.getReader()
  if (!reader) throw new Error('no feed')
  await background(session, n)
  const acceptedAt = performance.now()
  const { value } = await reader.read()
  const firstAt = performance.now()
  if (!value || !new TextDecoder().decode(value).includes('turn.started')) {
    throw new Error('the first line of the feed is not the turn')
  }
  await reader.cancel()
  return firstAt - acceptedAt
}

try {
  const { acceptedPerSecond, finishedPerSecond } = await throughput()
  const delays: number[] = []
  for (let n = 0; n < PROBES; n++) delays.push(await firstEventDelay(await newSession(), n))
  console.log(`background turns on one npm start (${TURNS} turns, ${CLIENTS} clients)`)
  console.log(`  accepted (202) per second:        ${acceptedPerSecond.toFixed(1)}`)
  console.log(`  run to their outcome per second:  ${finishedPerSecond.toFixed(1)}`)
  console.log(
    `  202 → first event on the feed:    median ${median(delays).toFixed(1)} ms, p90 ${percentile(delays, 90).toFixed(1)} ms (${PROBES} probes)`,
  )
} finally {
  await server.stop()
  await mock.close()
}

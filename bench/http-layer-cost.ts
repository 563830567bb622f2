/**
 * What the HTTP layer alone adds to a turn: the app as `npm start` builds it (createDeps from an
 * environment record, operator log on, tenancy, single-tenant auth) served by @hono/node-server
 * on loopback, answering `POST /v1/sessions/:id/turns` for a SessionApi whose `stepTurn` hands
 * back one real TurnResponse (a tool turn stepped once by the real engine at start, so its
 * events carry their dispatched text). Everything between the socket and `stepTurn` and back is
 * measured — the client's fetch included, as in bench/turn-cost.ts — and nothing of the engine.
 * A bare Hono app answering the same bytes on the same server runs alongside as the floor: what
 * the transport alone costs.
 *
 * Prints, per round, the mean wall ms and the process CPU ms per request (client and server
 * are one process), then the medians and the best rounds (the least disturbed on a shared
 * machine). The operator log goes to stdout as in
 * production; redirect it (`> /dev/null`) to read the figures on stderr.
 *
 * `--before <git revision>[,<revision>…]` also serves the app of each of those revisions (its
 * functions/ and src/ as extracted by bench/support/before-tree.ts) and runs the rounds of all
 * of them interleaved, so a change is measured against its parent under the same load.
 *
 *   npx tsx bench/http-layer-cost.ts [--requests 2000] [--rounds 5] [--warmup 500] [--before HEAD]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Hono } from 'hono'
import type { TurnResponse } from '../src/contract/api.ts'
import { serveApp } from '../test/support/http-server.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { median } from './support/stats.ts'
import {
  lookupTool,
  MODEL,
  type Scenario,
  startScenario,
  TENANT,
  TOOL_MASTER_SECRET,
} from './support/turn-cost-scenario.ts'
import { checkTurn } from './support/turnline-variants.ts'

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '500' },
    before: { type: 'string' },
  },
})
const REQUESTS = Number(values.requests)
const ROUNDS = Number(values.rounds)
const WARMUP = Number(values.warmup)

const out = (line: string) => process.stderr.write(`${line}\n`)
const here = join(import.meta.dirname, '..')

interface Served {
  label: string
  post(i: number): Promise<Response>
  expected: string
  close(): Promise<void>
}

/**
 * The app of the tree at `root`, built as `npm start` builds it, with a SessionApi that is that
 * tree's real service except that a turn answers one recorded turn (after a microtask): its own
 * modules, so the recorded events carry the text its own dispatcher serialized.
 */
async function serveTree(label: string, root: string, scenario: Scenario): Promise<Served> {
  const { createApp } = (await import(
    join(root, 'functions/app.ts')
  )) as typeof import('../functions/app.ts')
  const { createDeps } = (await import(
    join(root, 'functions/deps.ts')
  )) as typeof import('../functions/deps.ts')
  const { SessionService } = (await import(
    join(root, 'src/core/session-service.ts')
  )) as typeof import('../src/core/session-service.ts')
  const { MemoryObjectStore } = (await import(
    join(root, 'adapters/memory/memory-object-store.ts')
  )) as typeof import('../adapters/memory/memory-object-store.ts')
  const dataDir = await mkdtemp(join(tmpdir(), 'http-layer-cost-'))
  const deps = await createDeps(
    {
      TURNLINE_DATA_DIR: dataDir,
      OPENAI_BASE_URL: scenario.mock.baseURL,
      OPENAI_API_KEY: 'bench',
      TURNLINE_MODEL: MODEL,
      TURNLINE_TOOL_SECRET: TOOL_MASTER_SECRET,
    },
    { defaultStore: () => new MemoryObjectStore(), log: () => {} },
  )
  const service = new SessionService(deps.service)
  const { session_id } = await service.createSession(TENANT, {
    workspace: 'bench',
    tools: [lookupTool(scenario.toolUrl)],
  })
  const recorded = await service.stepTurn(TENANT, session_id, { input: 'look it up' })
  checkTurn(recorded, scenario.callsTool)
  const api = new Proxy(service, {
    get(target, property, receiver) {
      if (property === 'stepTurn') {
        return async (): Promise<TurnResponse> => {
          await Promise.resolve()
          return recorded
        }
      }
      const value: unknown = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const app = createApp({ api, auth: deps.auth, ...deps.http })
  const server = await serveApp(app)
  const url = `${server.url}/v1/sessions/${session_id}/turns`
  const post = (i: number) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `key-${i}` },
      body: JSON.stringify({ input: 'look it up' }),
    })
  const expected = await (await post(0)).text()
  return {
    label,
    post,
    expected,
    async close() {
      await server.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * The floor: a bare Hono app on the same server that reads the body as text, parses it and
 * answers the same bytes — the transport (undici's fetch, node:http, @hono/node-server, Hono's
 * router) without any of the app's middleware.
 */
async function serveBare(expected: string): Promise<Served> {
  const app = new Hono()
  app.post('/v1/sessions/:id/turns', async (c) => {
    const body = JSON.parse(await c.req.text()) as { input?: unknown }
    if (typeof body.input !== 'string') throw new Error('no input')
    return new Response(expected, {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
  })
  const server = await serveApp(app)
  const url = `${server.url}/v1/sessions/bare/turns`
  return {
    label: 'bare Hono app (floor)',
    post: (i) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `key-${i}` },
        body: JSON.stringify({ input: 'look it up' }),
      }),
    expected,
    close: () => server.close(),
  }
}

async function run(served: Served, count: number, offset: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await served.post(offset + i)
    const text = await response.text()
    if (response.status !== 200 || text !== served.expected) {
      throw new Error(
        `${served.label}: unexpected answer ${response.status}: ${text.slice(0, 500)}`,
      )
    }
    checkTurn(JSON.parse(text) as TurnResponse, true)
  }
}

const scenario = await startScenario()
const trees: BeforeTree[] = []
for (const revision of values.before?.split(',') ?? []) trees.push(await checkoutBefore(revision))
const apps = [await serveTree('this tree', here, scenario)]
for (const tree of trees) apps.push(await serveTree(tree.label, tree.root, scenario))
apps.push(await serveBare(apps[0]?.expected ?? ''))

out(
  `HTTP layer: ${ROUNDS} rounds × ${REQUESTS} turn requests, one at a time; Node ${process.version}`,
)
for (const served of apps) await run(served, WARMUP, 0)
const samples = apps.map(() => ({ walls: [] as number[], cpus: [] as number[] }))
for (let round = 0; round < ROUNDS; round++) {
  // Rotate the order per round, so that no app always runs first.
  for (let k = 0; k < apps.length; k++) {
    const index = (round + k) % apps.length
    const served = apps[index] as Served
    const sample = samples[index] as { walls: number[]; cpus: number[] }
    const cpu = process.cpuUsage()
    const started = performance.now()
    await run(served, REQUESTS, (round + 1) * REQUESTS)
    const wall = (performance.now() - started) / REQUESTS
    const used = process.cpuUsage(cpu)
    const cpuMs = (used.user + used.system) / 1000 / REQUESTS
    sample.walls.push(wall)
    sample.cpus.push(cpuMs)
    out(
      `round ${round + 1}/${ROUNDS} ${served.label}: ${wall.toFixed(3)} ms wall, ${cpuMs.toFixed(3)} ms CPU per request`,
    )
  }
}
for (const [index, served] of apps.entries()) {
  const { walls, cpus } = samples[index] as { walls: number[]; cpus: number[] }
  out(
    `${served.label}: median ${median(walls).toFixed(3)} ms wall, ${median(cpus).toFixed(3)} ms CPU; best ${Math.min(...walls).toFixed(3)} ms wall, ${Math.min(...cpus).toFixed(3)} ms CPU per request`,
  )
}

for (const served of apps) await served.close()
for (const tree of trees) await tree.remove()
await scenario.close()

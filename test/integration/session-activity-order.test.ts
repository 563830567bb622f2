import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { jsonCalls } from '../support/json-calls.ts'
import { startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startRunnerProcess } from '../support/runner-process.ts'
import { startTestBackends } from '../support/test-deployment.ts'

/**
 * `GET /v1/sessions` by last activity (the coordinator's activity index), on real `npm start`
 * processes: two instances on one S3 bucket (moto) and one Upstash (the REST proxy on
 * redis-server) — a session touched on B moves to the top of A's list at once, and a walk of
 * 250+ sessions that pages on A while B moves sessions lists each exactly once; and the embedded
 * default (fs store, the coordinator in the process) — a turn moves its session up, and after a
 * restart (an empty index) the list is filled in from the store in the same order.
 */
const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

const API_KEY = 'activity-order-key-0123456789'
const RUNNER_SECRET = 'activity-order-runner-secret-01'

type Calls = ReturnType<typeof jsonCalls>

async function start(env: Record<string, string>): Promise<{ entry: NodeEntry; url: string }> {
  const entry = startNodeEntry(env)
  closers.push(() => entry.stop())
  return { entry, url: await entry.listening() }
}

async function create(on: Calls): Promise<string> {
  const created = await on.call('POST', '/v1/sessions', {})
  expect(created.status, created.text).toBe(201)
  return created.json().session_id as string
}

async function firstIds(on: Calls, limit: number): Promise<string[]> {
  const page = await on.call('GET', `/v1/sessions?limit=${limit}`)
  expect(page.status, page.text).toBe(200)
  return (page.json().sessions as { session_id: string }[]).map((s) => s.session_id)
}

describe('sessions by last activity on two instances (S3 + Upstash)', () => {
  it('a session touched on B tops A’s list; a walk of 258 sessions lists each once while B moves them', async () => {
    const backends = await startTestBackends('activity')
    closers.push(() => backends.close())
    const runnerRoot = await mkdtemp(join(tmpdir(), 'turnline-activity-runner-'))
    await chmod(runnerRoot, 0o711)
    closers.push(() => rm(runnerRoot, { recursive: true, force: true }))
    const runner = await startRunnerProcess({ root: runnerRoot, secret: RUNNER_SECRET })
    closers.push(() => runner.stop())
    const env = backends.env({
      PORT: '0',
      TURNLINE_API_KEYS: `${API_KEY}=acme`,
      TURNLINE_TOOL_SECRET: 'activity-order-tool-secret-0123',
      TURNLINE_RUNNER_URL: runner.url,
      TURNLINE_RUNNER_SECRET: RUNNER_SECRET,
      TURNLINE_LOG: 'off',
    })
    const [a, b] = await Promise.all([start(env), start(env)])
    const auth = { authorization: `Bearer ${API_KEY}` }
    const A = jsonCalls(() => a?.url ?? '', auth)
    const B = jsonCalls(() => b?.url ?? '', auth)
    const turnOnB = async (session: string) => {
      backends.mock.enqueue({ text: 'ok' })
      const turn = await B.call('POST', `/v1/sessions/${session}/turns`, { input: 'hi' })
      expect(turn.status, turn.text).toBe(200)
    }

    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push(await create(i % 2 ? B : A))
    expect(await firstIds(A, 3)).toEqual([...ids].reverse())
    await turnOnB(ids[0] ?? '')
    expect(await firstIds(A, 3)).toEqual([ids[0], ids[2], ids[1]])
    const summary = (await A.call('GET', '/v1/sessions?limit=1')).json().sessions as {
      last_activity_at: string
      updated_at: string
    }[]
    expect(Date.parse(summary[0]?.last_activity_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(summary[0]?.updated_at ?? ''),
    )

    // 255 more, ten at a time, half on each instance.
    for (let i = 0; i < 255; i += 10) {
      const made = await Promise.all(
        Array.from({ length: Math.min(10, 255 - i) }, (_, k) => create((i + k) % 2 ? B : A)),
      )
      ids.push(...made)
    }
    const seen: string[] = []
    let cursor: string | undefined
    let touched = 0
    for (let pages = 0; pages < 20; pages++) {
      const query = `limit=50${cursor ? `&cursor=${cursor}` : ''}`
      const page = await A.call('GET', `/v1/sessions?${query}`)
      expect(page.status, page.text).toBe(200)
      const body = page.json() as { sessions: { session_id: string }[]; cursor?: string }
      seen.push(...body.sessions.map((s) => s.session_id))
      cursor = body.cursor
      if (!cursor) break
      // Meanwhile on B: a session the walk has not reached yet, and one it listed already.
      await turnOnB(ids[touched++] ?? '')
      await turnOnB(seen[0] ?? '')
    }
    expect(cursor).toBeUndefined()
    expect(seen.length).toBe(ids.length)
    expect(new Set(seen)).toEqual(new Set(ids))
    // A new walk starts from the order as it is now.
    expect((await firstIds(A, 1))[0]).toBe(seen[0])
  }, 300_000)
})

describe('sessions by last activity on the embedded default (fs store)', () => {
  it('a turn moves its session up, and a restarted server lists the same order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnline-activity-fs-'))
    await chmod(dir, 0o711)
    closers.push(() => rm(dir, { recursive: true, force: true }))
    const mock = await startMockOpenAI()
    closers.push(() => mock.close())
    const env = {
      PORT: '0',
      TURNLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_BASE_URL: mock.baseURL,
      OPENAI_API_KEY: 'sk-test',
      TURNLINE_MODEL: 'gpt-4o-mini',
      TURNLINE_LOG: 'off',
    }
    let server = await start(env)
    const on = jsonCalls(() => server.url)
    const ids = [await create(on), await create(on), await create(on)]
    mock.enqueue({ text: 'ok' })
    const turn = await on.call('POST', `/v1/sessions/${ids[1]}/turns`, { input: 'hi' })
    expect(turn.status, turn.text).toBe(200)
    const order = [ids[1], ids[2], ids[0]]
    expect(await firstIds(on, 10)).toEqual(order)
    const oldest = await on.call('GET', '/v1/sessions?order=oldest&limit=10')
    const ascending = (oldest.json().sessions as { session_id: string }[]).map((s) => s.session_id)
    expect(ascending).toEqual([...order].reverse())

    await server.entry.stop()
    server = await start(env)
    expect(await firstIds(on, 10)).toEqual(order)
    const deleted = await on.call('DELETE', `/v1/sessions/${ids[2]}`)
    expect(deleted.status, deleted.text).toBe(204)
    expect(await firstIds(on, 10)).toEqual([ids[1], ids[0]])
  }, 180_000)
})

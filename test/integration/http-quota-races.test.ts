import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import type { RedisTcpTenantLimiter } from '../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { nodeBackends } from '../../functions/entries/node-backends.ts'
import type { UsageReport } from '../../src/contract/tenancy.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { startAppInstance } from '../support/app-instance.ts'
import { serveApp } from '../support/http-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { requireServices } from '../support/services.ts'
import { startTestBackends } from '../support/test-deployment.ts'

/**
 * Daily token quotas under races, over real HTTP on each place the counters can live: Upstash
 * (the REST proxy in front of redis-server, sessions on S3) with three instances, plain Redis
 * over TCP with two, and this process (the embedded default, one instance). Every model call
 * holds its estimate before it is made, in one atomic step with the check, so parallel turns
 * cannot all pass the same check — not even when they reach different instances, which share
 * nothing but the coordinator; a turn refused that way is 429 and leaves nothing in its session.
 * Every reply here uses 150 tokens; the quota is two of them.
 */
const QUOTA = 300
const PER_TURN = 150
const run = crypto.randomUUID().slice(0, 8)

interface Deployment {
  /** One URL per instance; the instances share the coordinator (and the store, when not memory). */
  urls: string[]
  mock: MockOpenAI
  close(): Promise<void>
}

/**
 * `instances` apps on `env` (plus keys, the quota and the mock model), each served over HTTP,
 * all on the same coordinator.
 */
async function deployed(
  label: string,
  start: (env: Record<string, string>) => Promise<{ url: string; close(): Promise<void> }>,
  mock: MockOpenAI,
  instances = 1,
): Promise<Deployment & { key: (name: string) => string }> {
  const keys = ['race', 'fork', 'retry'].map((name) => `${label}-${name}-${run}-key-0123456789`)
  const env = {
    TURNLINE_API_KEYS: keys.map((key) => `${key}=${key.replace(/-key-.*$/, '')}`).join(','),
    TURNLINE_LIMIT_TOKENS_PER_DAY: String(QUOTA),
    TURNLINE_LOG: 'off',
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'test',
    TURNLINE_MODEL: 'gpt-4o-mini',
  }
  const apps: { url: string; close(): Promise<void> }[] = []
  for (let i = 0; i < instances; i++) apps.push(await start(env))
  return {
    urls: apps.map((app) => app.url),
    close: async () => {
      for (const app of apps) await app.close()
    },
    mock,
    key: (name) => keys.find((key) => key.startsWith(`${label}-${name}-`)) ?? '',
  }
}

/** An app built by createDeps from `env` the way `npm start` does, on node's backends. */
async function nodeApp(env: Record<string, string>) {
  const deps = await createDeps(env, nodeBackends)
  const server = await serveApp(
    createApp({ api: new SessionService(deps.service), auth: deps.auth, ...deps.http }),
  )
  return {
    url: server.url,
    async close() {
      await server.close()
      const limiter = deps.http.tenancy.limiter as Partial<RedisTcpTenantLimiter>
      await limiter.close?.()
      const coordinator = deps.service.coordinator as Partial<RedisTcpCoordinator>
      await coordinator.close?.()
    },
  }
}

const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers.reverse()) await close()
})

const transports: [string, () => ReturnType<typeof deployed>][] = [
  [
    'Upstash (REST proxy → redis-server), sessions on S3',
    async () => {
      const backends = await startTestBackends('quota-races')
      closers.push(() => backends.close())
      return deployed('upstash', (env) => startAppInstance(backends.env(env)), backends.mock, 3)
    },
  ],
  [
    'plain Redis over TCP',
    async () => {
      const mock = await startMockOpenAI()
      closers.push(() => mock.close())
      const redis = { TURNLINE_STORE: 'memory', REDIS_URL: requireServices().redisUrl }
      // Sessions in each instance's memory: a session lives on the instance that made it.
      return deployed('tcp', (env) => nodeApp({ ...redis, ...env }), mock, 2)
    },
  ],
  [
    'this process (the embedded default)',
    async () => {
      const mock = await startMockOpenAI()
      closers.push(() => mock.close())
      return deployed('memory', (env) => nodeApp({ TURNLINE_STORE: 'memory', ...env }), mock)
    },
  ],
]

describe.each(transports)('daily token quota under races: %s', (_name, start) => {
  let app: Awaited<ReturnType<typeof deployed>>
  beforeAll(async () => {
    app = await start()
    closers.push(() => app.close())
  })

  /** A request to instance `on` (of `app.urls`). */
  const call = (name: string, path: string, init: RequestInit = {}, on = 0) =>
    fetch(`${app.urls[on % app.urls.length]}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${app.key(name)}`,
        'content-type': 'application/json',
        ...(init.headers as Record<string, string> | undefined),
      },
    })
  const newSession = async (name: string, on = 0) => {
    const res = await call(name, '/v1/sessions', { method: 'POST', body: '{}' }, on)
    expect(res.status).toBe(201)
    return ((await res.json()) as { session_id: string }).session_id
  }
  const turn = (name: string, id: string, headers: Record<string, string> = {}, on = 0) =>
    call(
      name,
      `/v1/sessions/${id}/turns`,
      { method: 'POST', body: JSON.stringify({ input: 'go' }), headers },
      on,
    )
  const usage = async (name: string) =>
    (await (await call(name, '/v1/usage')).json()) as UsageReport
  const replies = (delayMs = 0) =>
    app.mock.respond(async () => {
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      return { text: 'done', usage: { input_tokens: 100, output_tokens: 50 } }
    })

  it('50 parallel turns spread over the instances end within the quota plus one turn; the refused ones leave nothing', async () => {
    app.mock.reset()
    replies(100)
    const ids = []
    // Session i lives on (and is turned on) instance i mod the instance count.
    for (let i = 0; i < 50; i++) ids.push(await newSession('race', i))
    const answers = await Promise.all(ids.map((id, i) => turn('race', id, {}, i)))
    const ran = answers.filter((a) => a.status === 200)
    const refused = answers.filter((a) => a.status === 429)
    expect(ran.length + refused.length).toBe(50)
    expect(ran.length).toBeGreaterThanOrEqual(1)
    expect(app.mock.requests).toHaveLength(ran.length)
    // Each instance refused some: each checked the counters every instance shares.
    for (let on = 0; on < app.urls.length; on++) {
      const here = answers.filter((_, i) => i % app.urls.length === on)
      expect(here.some((a) => a.status === 429)).toBe(true)
    }
    for (const answer of refused) {
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
        'quota_exceeded',
      )
    }
    const report = await usage('race')
    expect(report.tokens.used).toBe(ran.length * PER_TURN)
    expect(report.tokens.used).toBeLessThanOrEqual(QUOTA + PER_TURN)
    expect(report.tokens.reserved).toBe(0)
    // A refused turn committed nothing: its session holds only thread.started.
    const refusedAt = answers.findIndex((a) => a.status === 429)
    const view = (await (
      await call('race', `/v1/sessions/${ids[refusedAt]}`, {}, refusedAt)
    ).json()) as {
      turn_count: number
      last_seq: number
    }
    expect(view).toMatchObject({ turn_count: 0, last_seq: 0 })
  })

  it('5 forks over the quota call no model', async () => {
    app.mock.reset()
    replies()
    const id = await newSession('fork')
    expect((await turn('fork', id)).status).toBe(200)
    expect((await turn('fork', id)).status).toBe(200)
    expect((await usage('fork')).tokens).toMatchObject({ used: QUOTA, remaining: 0 })
    // From here any model request fails the test.
    app.mock.reset()
    const forks = await Promise.all(
      Array.from({ length: 5 }, () => call('fork', `/v1/sessions/${id}/fork`, { method: 'POST' })),
    )
    for (const fork of forks) {
      expect(fork.status).toBe(429)
      expect(await fork.json()).toMatchObject({
        error: { code: 'quota_exceeded', details: { quota: 'tokens', limit: QUOTA, used: QUOTA } },
      })
    }
    expect(app.mock.requests).toHaveLength(0)
    app.mock.assertDone()
  })

  it('a retried turn over the quota answers its first outcome without a new charge', async () => {
    app.mock.reset()
    replies()
    const id = await newSession('retry')
    const key = { 'idempotency-key': `retry-${run}` }
    const first = await turn('retry', id, key)
    expect(first.status).toBe(200)
    expect((await turn('retry', await newSession('retry'))).status).toBe(200)
    expect((await turn('retry', id)).status).toBe(429)
    app.mock.reset()
    const again = await turn('retry', id, key)
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual(await first.json())
    expect(app.mock.requests).toHaveLength(0)
    expect((await usage('retry')).tokens.used).toBe(QUOTA)
  })
})

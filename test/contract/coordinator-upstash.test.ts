import { Redis } from '@upstash/redis'
import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'
import {
  UpstashCoordinator,
  type UpstashCoordinatorOptions,
} from '../../adapters/upstash/upstash-coordinator.ts'
import { isTurnlineError, type TurnlineError } from '../../src/contract/errors.ts'
import { requireServices } from '../support/services.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'
import { acquired, describeCoordinator, outcome } from './coordinator.suite.ts'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const runPrefix = `turnline-test:${crypto.randomUUID().slice(0, 8)}:`
let proxy: UpstashProxy
let admin: IORedis
let namespaces = 0

beforeAll(async () => {
  const { redisUrl } = requireServices()
  proxy = await startUpstashProxy({ redisUrl })
  admin = new IORedis(redisUrl)
})

afterAll(async () => {
  const keys = await admin.keys(`${runPrefix}*`)
  if (keys.length > 0) await admin.del(...keys)
  await proxy?.close()
  admin?.disconnect()
})

const freshNamespace = () => `${runPrefix}${namespaces++}:`

function coordinator(extra: Partial<UpstashCoordinatorOptions> = {}): UpstashCoordinator {
  return new UpstashCoordinator({
    url: proxy.url,
    token: proxy.token,
    namespace: freshNamespace(),
    ...extra,
  } as UpstashCoordinatorOptions)
}

// Without auto-pipelining every call is its own HTTP request: concurrency is real on the wire.
describeCoordinator('upstash (REST proxy → redis-server)', async () => ({
  coordinator: coordinator({ enableAutoPipelining: false }),
  advance: sleep,
  cleanup: async () => {},
}))

// The Node entries' fetch (on node:http, kept alive), pipelining on (the default).
describeCoordinator("upstash over node:http (the Node entries' fetch)", async () => ({
  coordinator: coordinator({ fetch: nodeFetch() }),
  advance: sleep,
  cleanup: async () => {},
}))

// A client configured like most applications configure it: automatic deserialization and
// auto-pipelining on. The adapter must give the same answers.
describeCoordinator('upstash (injected client, library defaults)', async () => ({
  coordinator: new UpstashCoordinator({
    client: new Redis({ url: proxy.url, token: proxy.token, enableTelemetry: false }),
    namespace: freshNamespace(),
  }),
  advance: sleep,
  cleanup: async () => {},
}))

async function caught(promise: Promise<unknown>): Promise<TurnlineError> {
  try {
    await promise
  } catch (error) {
    if (isTurnlineError(error)) return error
    throw error
  }
  throw new Error('expected a TurnlineError')
}

describe('UpstashCoordinator specifics', () => {
  for (const [enableAutoPipelining, onNode] of [
    [true, undefined],
    [false, undefined],
    [true, nodeFetch()],
  ] as const) {
    const over = onNode ? ', node:http' : ''
    it(`an ordinary turn costs exactly 2 HTTP round trips (auto-pipelining ${enableAutoPipelining}${over})`, async () => {
      const c = coordinator({ enableAutoPipelining, ...(onNode ? { fetch: onNode } : {}) })
      const idempotency = {
        key: 'idem-1',
        record: { sessionId: 's1', turnId: 't1', batch: 1, response: '{"ok":true}' },
      }
      proxy.resetStats()
      const before = c.requestCount
      const begin = await c.beginTurn({
        sessionId: 's1',
        tenant: 'a',
        leaseMs: 30_000,
        idempotencyKey: 'idem-1',
      })
      await c.endTurn({ lease: acquired(begin), tenant: 'a', tip: 1, idempotency })
      expect(c.requestCount - before).toBe(2)
      expect(proxy.requestCount).toBe(2)
      expect(proxy.requests.map((r) => r.commands)).toEqual([['eval'], ['eval']])
      expect(proxy.requests.map((r) => r.path)).toEqual(
        enableAutoPipelining ? ['/pipeline', '/pipeline'] : ['/', '/'],
      )

      // A retry of that turn is answered in one round trip.
      proxy.resetStats()
      const replay = await c.beginTurn({
        sessionId: 's1',
        tenant: 'a',
        leaseMs: 30_000,
        idempotencyKey: 'idem-1',
      })
      expect(replay).toEqual({ status: 'replay', record: idempotency.record })
      expect(proxy.requestCount).toBe(1)
    })
  }

  for (const [name, onNode] of [
    ['fetch', undefined],
    ['node:http', nodeFetch()],
  ] as const) {
    it(`sends back the database's latest sync token (read-your-writes; ${name})`, async () => {
      const c = coordinator(onNode ? { fetch: onNode } : {})
      proxy.resetStats()
      await c.setTip('s', 1)
      await c.getTip('s')
      await c.getTip('s')
      const [first, second, third] = proxy.requests
      expect(first?.syncToken).toBeUndefined()
      expect(second?.syncToken).toMatch(/^sync-\d+$/)
      expect(third?.syncToken).not.toBe(second?.syncToken)
      expect(Number(third?.syncToken?.slice(5))).toBeGreaterThan(
        Number(second?.syncToken?.slice(5)),
      )
    })
  }

  it('every other operation is one round trip', async () => {
    const c = coordinator({ enableAutoPipelining: false })
    const lease = acquired(await c.beginTurn({ sessionId: 's', tenant: 'a', leaseMs: 30_000 }))
    proxy.resetStats()
    await c.renewLease(lease, 30_000)
    await c.beginTurn({ sessionId: 's', tenant: 'a', leaseMs: 30_000 })
    await c.setTip('s', 3)
    await c.getTip('s')
    await c.enqueueIntent('s', { id: 'i1', text: 'x' })
    await c.pendingIntents('s')
    await c.ackIntents('s', ['i1'])
    await c.releaseLease(lease)
    expect(proxy.requestCount).toBe(8)
    await c.ackIntents('s', [])
    expect(proxy.requestCount).toBe(8)
  })

  it('keeps keys under its namespace, with the TTLs the design names', async () => {
    const ns = freshNamespace()
    const c = coordinator({ namespace: ns })
    const lease = acquired(await c.beginTurn({ sessionId: 's1', tenant: 'a:b', leaseMs: 5_000 }))
    expect(await admin.get(`${ns}lease:s1`)).toBe(lease.token)
    const pttl = await admin.pttl(`${ns}lease:s1`)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(5_000)
    await c.endTurn({
      lease,
      tenant: 'a:b',
      tip: 7,
      idempotency: { key: 'k', record: { sessionId: 's1', turnId: 't', batch: 7, response: '{}' } },
    })
    expect(await admin.exists(`${ns}lease:s1`)).toBe(0)
    expect(await admin.get(`${ns}tip:s1`)).toBe('7')
    expect(await admin.ttl(`${ns}tip:s1`)).toBeGreaterThan(29 * 86_400)
    const idemTtl = await admin.ttl(`${ns}idem:a%3Ab:k`)
    expect(idemTtl).toBeGreaterThan(86_300)
    expect(idemTtl).toBeLessThanOrEqual(86_400)
    await c.enqueueIntent('s1', { id: 'i1', text: 'hello' })
    expect(await admin.lrange(`${ns}intents:s1`, 0, -1)).toEqual(['1\ni1\nhello'])
    expect(await admin.ttl(`${ns}intents:s1`)).toBe(-1)
  })

  it('a resent beginTurn whose first attempt already won is still acquired', async () => {
    // A resend carries the same token, its acquisition stamp included.
    const ids = { uuid: () => crypto.randomUUID(), token: () => 'same-token-for-a-resend' }
    const c = coordinator({ ids, clock: { now: () => 1_800_000_000_000 } })
    acquired(await c.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 30_000 }))
    acquired(await c.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 30_000 }))
    const other = coordinator()
    expect((await other.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 30_000 })).status).toBe(
      'acquired',
    )
  })

  it('a resent claim whose first attempt won is still won; a replay is not', async () => {
    const ns = freshNamespace()
    const ids = { uuid: () => crypto.randomUUID(), token: () => 'same-token-for-a-resend' }
    const c = coordinator({ namespace: ns, ids })
    expect(await c.claimOnce('runner-callback:n1', 5_000)).toBe(true)
    expect(await c.claimOnce('runner-callback:n1', 5_000)).toBe(true)
    expect(await coordinator({ namespace: ns }).claimOnce('runner-callback:n1', 5_000)).toBe(false)
    const pttl = await admin.pttl(`${ns}once:runner-callback:n1`)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(5_000)
  })

  it('a wrong token is a clear, non-retryable coordinator_unavailable', async () => {
    const c = new UpstashCoordinator({
      url: proxy.url,
      token: 'wrong',
      namespace: freshNamespace(),
    })
    const error = await caught(c.enqueueIntent('s1', { id: 'i1', text: 'secret text' }))
    expect(error.code).toBe('coordinator_unavailable')
    expect(error.retryable).toBe(false)
    expect(error.details).toMatchObject({ reason: 'unauthorized', operation: 'enqueueIntent' })
    expect(error.message).toMatch(/Unauthorized/)
    expect(error.message).not.toMatch(/secret text/)
  })

  it('an unreachable endpoint is a retryable coordinator_unavailable', async () => {
    const closed = await startUpstashProxy({ redisUrl: requireServices().redisUrl })
    await closed.close()
    const c = new UpstashCoordinator({
      url: closed.url,
      token: closed.token,
      retry: false,
      deadline: { attemptMs: 200, budgetMs: 700 },
    })
    const started = Date.now()
    const error = await caught(c.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 1_000 }))
    expect(error.code).toBe('coordinator_unavailable')
    expect(error.retryable).toBe(true)
    expect(error.retryAfter).toBeGreaterThanOrEqual(1)
    expect(error.details).toMatchObject({ reason: 'transport', operation: 'beginTurn' })
    // Resent within its budget (every script is safe to resend), then given up.
    expect(error.details?.attempts).toBeGreaterThan(1)
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it('reports unreadable stored values as corrupt_data', async () => {
    const ns = freshNamespace()
    const c = coordinator({ namespace: ns })
    await admin.set(`${ns}tip:s1`, 'not-a-number')
    expect(await outcome(c.getTip('s1'))).toBe('corrupt_data')
    await admin.rpush(`${ns}intents:s1`, 'no version line')
    expect(await outcome(c.pendingIntents('s1'))).toBe('corrupt_data')
    await admin.set(`${ns}idem:a:k`, '{"v":99}')
    expect(
      await outcome(
        c.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 1_000, idempotencyKey: 'k' }),
      ),
    ).toBe('corrupt_data')
  })
})

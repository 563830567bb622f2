import { createServer } from 'node:net'
import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  RedisTcpCoordinator,
  type RedisTcpCoordinatorOptions,
} from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { UpstashCoordinator } from '../../adapters/upstash/upstash-coordinator.ts'
import { isTurnlineError, type TurnlineError } from '../../src/contract/errors.ts'
import { requireServices } from '../support/services.ts'
import { startUpstashProxy } from '../support/upstash-proxy.ts'
import { acquired, describeCoordinator, outcome } from './coordinator.suite.ts'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const runPrefix = `turnline-test-tcp:${crypto.randomUUID().slice(0, 8)}:`
const opened: RedisTcpCoordinator[] = []
let admin: IORedis
let namespaces = 0

beforeAll(() => {
  admin = new IORedis(requireServices().redisUrl)
})

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()))
  const keys = await admin.keys(`${runPrefix}*`)
  if (keys.length > 0) await admin.del(...keys)
  admin?.disconnect()
})

const freshNamespace = () => `${runPrefix}${namespaces++}:`

function coordinator(extra: Partial<RedisTcpCoordinatorOptions> = {}): RedisTcpCoordinator {
  const c = new RedisTcpCoordinator({
    url: requireServices().redisUrl,
    namespace: freshNamespace(),
    ...extra,
  })
  opened.push(c)
  return c
}

describeCoordinator('redis-tcp (ioredis → redis-server)', async () => {
  const c = coordinator()
  return { coordinator: c, advance: sleep, cleanup: () => c.close() }
})

async function caught(promise: Promise<unknown>): Promise<TurnlineError> {
  try {
    await promise
  } catch (error) {
    if (isTurnlineError(error)) return error
    throw error
  }
  throw new Error('expected a TurnlineError')
}

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

describe('RedisTcpCoordinator specifics', () => {
  it('an ordinary turn costs exactly 2 round trips; a replay 1', async () => {
    const c = coordinator()
    const idempotency = {
      key: 'idem-1',
      record: { sessionId: 's1', turnId: 't1', batch: 1, response: '{"ok":true}' },
    }
    const before = c.requestCount
    const begin = await c.beginTurn({
      sessionId: 's1',
      tenant: 'a',
      leaseMs: 30_000,
      idempotencyKey: 'idem-1',
    })
    await c.endTurn({ lease: acquired(begin), tenant: 'a', tip: 1, idempotency })
    expect(c.requestCount - before).toBe(2)
    const replay = await c.beginTurn({
      sessionId: 's1',
      tenant: 'a',
      leaseMs: 30_000,
      idempotencyKey: 'idem-1',
    })
    expect(replay).toEqual({ status: 'replay', record: idempotency.record })
    expect(c.requestCount - before).toBe(3)
  })

  it('shares keys and meaning with the Upstash adapter (one Redis, either client)', async () => {
    const ns = freshNamespace()
    const tcp = coordinator({ namespace: ns })
    const proxy = await startUpstashProxy({ redisUrl: requireServices().redisUrl })
    try {
      const rest = new UpstashCoordinator({ url: proxy.url, token: proxy.token, namespace: ns })
      const lease = acquired(await tcp.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 30_000 }))
      expect((await rest.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 30_000 })).status).toBe(
        'busy',
      )
      await tcp.endTurn({
        lease,
        tenant: 'a',
        tip: 4,
        idempotency: {
          key: 'k',
          record: { sessionId: 's1', turnId: 't', batch: 4, response: '{}' },
        },
      })
      expect(await rest.getTip('s1')).toBe(4)
      await rest.enqueueIntent('s1', { id: 'i1', text: 'from REST' })
      expect(await tcp.pendingIntents('s1')).toEqual([{ id: 'i1', text: 'from REST' }])
      expect(
        await rest.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 1_000, idempotencyKey: 'k' }),
      ).toMatchObject({ status: 'replay', record: { turnId: 't', batch: 4 } })
    } finally {
      await proxy.close()
    }
  })

  it('an unreachable server is a retryable coordinator_unavailable naming the cause to the log only', async () => {
    const port = await closedPort()
    const c = coordinator({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 500 })
    const error = await caught(c.beginTurn({ sessionId: 's1', tenant: 'a', leaseMs: 1_000 }))
    expect(error.code).toBe('coordinator_unavailable')
    expect(error.retryable).toBe(true)
    expect(error.details).toMatchObject({ reason: 'transport', operation: 'beginTurn' })
    // The message is a client's answer: not the server's address (that is the operator's).
    expect(error.message).not.toContain(String(port))
    expect(String(error.logDetails?.transport)).toMatch(new RegExp(`ECONNREFUSED .*:${port}`))
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

  it('a value of the wrong Redis type is an internal error, not an outage', async () => {
    const ns = freshNamespace()
    const c = coordinator({ namespace: ns })
    await admin.set(`${ns}intents:s1`, 'a string, not a list')
    const error = await caught(c.enqueueIntent('s1', { id: 'i1', text: 'x' }))
    expect(error.code).toBe('internal')
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'
import { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { S3ObjectStore } from '../../adapters/s3/s3-object-store.ts'
import type { IoDeadline } from '../../adapters/shared/io-deadline.ts'
import { UpstashCoordinator } from '../../adapters/upstash/upstash-coordinator.ts'
import { isTurnlineError, type TurnlineError } from '../../src/contract/errors.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { type FreezableProxy, startFreezableProxy } from '../support/freezable-proxy.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { until } from '../support/until.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * Deadlines of the network adapters against real services behind a proxy that can freeze (stop
 * answering): a frozen S3 or Upstash ends the call in bounded time with a retryable 503 code
 * and Retry-After; a backend that comes back within the budget is retried successfully; and a
 * resent write whose first attempt landed (its reply lost) still counts as ours.
 */
const services = requireServices()
const DEADLINE: IoDeadline = { attemptMs: 500, budgetMs: 1800 }
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let s3Proxy: FreezableProxy
let upstash: UpstashProxy
let redisProxy: FreezableProxy
let tcpProxy: FreezableProxy
const tcpCoordinators: RedisTcpCoordinator[] = []
let prefixes = 0

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'deadline')
  s3Proxy = await startFreezableProxy(services.s3.endpoint)
  upstash = await startUpstashProxy({ redisUrl: services.redisUrl })
  redisProxy = await startFreezableProxy(upstash.url)
  tcpProxy = await startFreezableProxy(services.redisUrl)
})
afterAll(async () => {
  for (const c of tcpCoordinators) await c.close()
  await tcpProxy?.close()
  await s3Proxy?.close()
  await redisProxy?.close()
  await upstash?.close()
  await bucket?.destroy()
})
beforeEach(() => {
  s3Proxy.thaw()
  redisProxy.thaw()
  tcpProxy.thaw()
})

function s3Store(deadline: IoDeadline = DEADLINE): S3ObjectStore {
  return new S3ObjectStore({
    bucket: bucket.bucket,
    prefix: `d${++prefixes}`,
    endpoint: s3Proxy.url,
    region: services.s3.region,
    forcePathStyle: true,
    credentials: {
      accessKeyId: services.s3.accessKeyId,
      secretAccessKey: services.s3.secretAccessKey,
    },
    deadline,
  })
}

function coordinator(
  deadline: IoDeadline = DEADLINE,
  onNode: typeof fetch | undefined = undefined,
): UpstashCoordinator {
  return new UpstashCoordinator({
    ...(onNode ? { fetch: onNode } : {}),
    url: redisProxy.url,
    token: upstash.token,
    namespace: `turnline-deadline:${crypto.randomUUID().slice(0, 8)}:`,
    enableAutoPipelining: false,
    deadline,
  })
}

async function failure(promise: Promise<unknown>): Promise<{ error: TurnlineError; ms: number }> {
  const started = Date.now()
  try {
    await promise
  } catch (error) {
    if (isTurnlineError(error)) return { error, ms: Date.now() - started }
    throw error
  }
  throw new Error('expected a TurnlineError')
}

/** With `proxy` frozen, a beginTurn fails in bounded time: a retryable 503 code, Retry-After. */
async function frozenBeginTurnFails(c: Coordinator, proxy: FreezableProxy): Promise<void> {
  proxy.freeze()
  const { error, ms } = await failure(
    c.beginTurn({ sessionId: 's1', tenant: 't', leaseMs: 10_000 }),
  )
  expect(error.code).toBe('coordinator_unavailable')
  expect(error.retryable).toBe(true)
  expect(error.retryAfter).toBeGreaterThanOrEqual(1)
  expect(ms).toBeLessThan(DEADLINE.budgetMs + 1_000)
}

/** Roomy attempts for the tests that thaw a backend in time: a loaded machine still makes it. */
const ROOMY: IoDeadline = { attemptMs: 1_500, budgetMs: 6_000 }

/** Waits until the call has been sent again through `proxy` (its first attempt abandoned). */
const resent = (proxy: FreezableProxy) =>
  until('the resend', () => (proxy.requestsSinceFreeze >= 2 ? true : undefined), 10_000)

describe('S3 deadlines', () => {
  it('a frozen store fails every kind of call in bounded time: 503 code, Retry-After, no key', async () => {
    const store = s3Store()
    await store.put('sessions/a/log/0000000000.json', new Uint8Array([1]))
    s3Proxy.freeze()
    const calls = [
      () => store.get('sessions/a/log/0000000000.json'),
      () => store.put('sessions/a/log/0000000001.json', new Uint8Array([2]), { ifNoneMatch: '*' }),
      () => store.list('sessions/'),
      () => store.delete('sessions/a/log/0000000000.json'),
    ]
    for (const call of calls) {
      const { error, ms } = await failure(call())
      expect(error.code).toBe('storage_unavailable')
      expect(error.retryable).toBe(true)
      expect(error.retryAfter).toBeGreaterThanOrEqual(1)
      expect(error.details).toMatchObject({ reason: 'timeout' })
      expect(error.message).not.toContain('sessions/')
      expect(ms).toBeLessThan(DEADLINE.budgetMs + 1_000)
    }
  })

  it('retries within the budget: a store that comes back in time answers', async () => {
    const store = s3Store(ROOMY)
    await store.put('k', new Uint8Array([7]))
    s3Proxy.freeze()
    const read = store.get('k')
    await resent(s3Proxy)
    s3Proxy.thaw()
    expect((await read)?.body).toEqual(new Uint8Array([7]))
  })

  it('a resent create-only commit whose first attempt landed is still the commit', async () => {
    // Roomy attempts: the resend must get its answer in time on a loaded machine.
    const objects = s3Store({ attemptMs: 1_500, budgetMs: 6_000 })
    const sessions = new SessionStore({ store: objects })
    const ref = { tenant: 't', workspace: 'w', sessionId: 's-resend' }
    s3Proxy.freeze('replies')
    const created = sessions.create(ref, 's-resend', {
      events: [{ type: 'thread.started', thread_id: 's-resend' }],
      state: { v: 1 },
    })
    // The first attempt landed (its answer is held back), so the resend meets 412.
    const direct = new S3ObjectStore({
      bucket: bucket.bucket,
      prefix: `d${prefixes}`,
      client: bucket.client,
    })
    const landed = async () => (await direct.list('t/w/.vtcode/sessions/s-resend/log/')).objects
    await vi.waitFor(async () => expect(await landed()).not.toEqual([]), { timeout: 10_000 })
    expect((await landed()).map((o) => o.key)).toEqual([
      't/w/.vtcode/sessions/s-resend/log/0000000000.json',
    ])
    await resent(s3Proxy)
    s3Proxy.thaw()
    const result = await created
    expect(result.batch).toBe(0)
    expect((await sessions.open(ref)).lastBatch).toBe(0)
  })
})

// Over the runtime's fetch (the default) and over fetch on node:http (what
// the Node entries pass): an abandoned request is aborted either way, and resent on a new one.
for (const [name, onNode] of [
  ['fetch', undefined],
  ['node:http', nodeFetch()],
] as const) {
  describe(`Upstash deadlines (${name})`, () => {
    it('a frozen coordinator fails in bounded time: 503 code, Retry-After', async () => {
      await frozenBeginTurnFails(coordinator(DEADLINE, onNode), redisProxy)
    })

    it('a resent beginTurn whose first attempt won (reply lost) still holds the lease', async () => {
      const c = coordinator(ROOMY, onNode)
      redisProxy.freeze('replies')
      const begin = c.beginTurn({ sessionId: 's-lost-reply', tenant: 't', leaseMs: 10_000 })
      await resent(redisProxy)
      redisProxy.thaw()
      expect((await begin).status).toBe('acquired')
    })

    it('a resent one-time claim whose first attempt won is still won', async () => {
      const c = coordinator(ROOMY, onNode)
      redisProxy.freeze('replies')
      const claim = c.claimOnce('runner-callback:lost-reply', 10_000)
      await resent(redisProxy)
      redisProxy.thaw()
      expect(await claim).toBe(true)
      expect(await c.claimOnce('runner-callback:lost-reply', 10_000)).toBe(false)
    })
  })
}

describe('plain Redis (TCP) deadlines', () => {
  function tcpCoordinator(deadline: IoDeadline = DEADLINE): RedisTcpCoordinator {
    const c = new RedisTcpCoordinator({
      url: `redis://${new URL(tcpProxy.url).host}`,
      namespace: `turnline-deadline-tcp:${crypto.randomUUID().slice(0, 8)}:`,
      deadline,
    })
    tcpCoordinators.push(c)
    return c
  }

  it('a frozen Redis fails in bounded time: 503 code, Retry-After', async () => {
    const c = tcpCoordinator()
    expect(await c.getTip('warm-up')).toBeNull()
    await frozenBeginTurnFails(c, tcpProxy)
  })

  it('a resent beginTurn whose first attempt won (reply lost) still holds the lease', async () => {
    const c = tcpCoordinator(ROOMY)
    expect(await c.getTip('warm-up')).toBeNull()
    tcpProxy.freeze('replies')
    const begin = c.beginTurn({ sessionId: 's-lost-reply', tenant: 't', leaseMs: 10_000 })
    await resent(tcpProxy)
    tcpProxy.thaw()
    expect((await begin).status).toBe('acquired')
  })
})

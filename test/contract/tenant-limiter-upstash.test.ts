import { Redis } from '@upstash/redis'
import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UpstashTenantLimiter } from '../../adapters/upstash/upstash-tenant-limiter.ts'
import { requireServices } from '../support/services.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'
import { describeTenantLimiter } from './tenant-limiter.suite.ts'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const runPrefix = `turnline-test-limit:${crypto.randomUUID().slice(0, 8)}:`
const WINDOW_MS = 1_000
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

const harness = (limiter: UpstashTenantLimiter) => ({
  limiter,
  windowMs: WINDOW_MS,
  advance: sleep,
  now: () => Date.now(),
  cleanup: async () => {},
})

describeTenantLimiter('upstash (REST proxy → redis-server)', async () =>
  harness(
    new UpstashTenantLimiter({
      url: proxy.url,
      token: proxy.token,
      namespace: freshNamespace(),
      windowMs: WINDOW_MS,
    }),
  ),
)

describeTenantLimiter('upstash (injected client, library defaults)', async () =>
  harness(
    new UpstashTenantLimiter({
      client: new Redis({ url: proxy.url, token: proxy.token, enableTelemetry: false }),
      namespace: freshNamespace(),
      windowMs: WINDOW_MS,
    }),
  ),
)

describe('UpstashTenantLimiter specifics', () => {
  it('counting a limited request is one HTTP round trip, one script', async () => {
    const limiter = new UpstashTenantLimiter({
      url: proxy.url,
      token: proxy.token,
      namespace: freshNamespace(),
    })
    await limiter.hit('acme', 100)
    proxy.resetStats()
    await limiter.hit('acme', 100)
    expect(proxy.requestCount).toBe(1)
    expect(proxy.requests[0]?.commands).toEqual(['eval'])
  })

  it('keeps the window in the keys of @upstash/ratelimit (rl:rpm) under the namespace', async () => {
    const ns = freshNamespace()
    const limiter = new UpstashTenantLimiter({
      url: proxy.url,
      token: proxy.token,
      namespace: ns,
      windowMs: WINDOW_MS,
    })
    await limiter.hit('acme', 10)
    const keys = await admin.keys(`${ns}*`)
    expect(keys.some((key) => /^.*rl:rpm:acme:\d+$/.test(key))).toBe(true)
    expect(keys.some((key) => /usage:acme:\d{4}-\d\d-\d\d$/.test(key))).toBe(true)
  })

  it('a wrong token is coordinator_unavailable, never a silent pass', async () => {
    const limiter = new UpstashTenantLimiter({ url: proxy.url, token: 'wrong' })
    await expect(limiter.hit('acme', 10)).rejects.toMatchObject({
      code: 'coordinator_unavailable',
    })
  })
})

import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { RedisTcpFailureThrottle } from '../../adapters/redis-tcp/redis-tcp-failure-throttle.ts'
import { UpstashFailureThrottle } from '../../adapters/upstash/upstash-failure-throttle.ts'
import { requireServices } from '../support/services.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'
import { describeFailureThrottle, ManualClock } from './failure-throttle.suite.ts'

/** Both Redis transports on redis-server: plain TCP, and Upstash REST through the proxy. */
const runPrefix = `turnline-test-authfail:${crypto.randomUUID().slice(0, 8)}:`
let admin: IORedis
let proxy: UpstashProxy
let namespaces = 0

beforeAll(async () => {
  admin = new IORedis(requireServices().redisUrl)
  proxy = await startUpstashProxy({ redisUrl: requireServices().redisUrl })
})
afterAll(async () => {
  const keys = await admin.keys(`${runPrefix}*`)
  if (keys.length > 0) await admin.del(...keys)
  admin?.disconnect()
  await proxy?.close()
})

describeFailureThrottle('redis-tcp (ioredis → redis-server)', async () => {
  const clock = new ManualClock()
  const namespace = `${runPrefix}${namespaces++}:`
  const url = requireServices().redisUrl
  const throttle = new RedisTcpFailureThrottle({ url, namespace, clock })
  const sibling = new RedisTcpFailureThrottle({ url, namespace, clock })
  return {
    throttle,
    sibling,
    advance: (ms) => {
      clock.time += ms
    },
    cleanup: async () => {
      await throttle.close()
      await sibling.close()
    },
  }
})

describeFailureThrottle('upstash (REST proxy → redis-server)', async () => {
  const clock = new ManualClock()
  const namespace = `${runPrefix}${namespaces++}:`
  const connection = { url: proxy.url, token: proxy.token, namespace, clock }
  return {
    throttle: new UpstashFailureThrottle(connection),
    sibling: new UpstashFailureThrottle(connection),
    advance: (ms) => {
      clock.time += ms
    },
    cleanup: async () => {},
  }
})

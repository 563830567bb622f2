import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { describePendingCapAdmissions } from '../support/pending-cap.suite.ts'
import { describePendingCapRetries } from '../support/pending-cap-retries.suite.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * The pending-work cap as requests meet it, on S3 (moto) and Redis (redis-server), each of the
 * two instances with its own Redis client, so holds are taken across instances.
 */
const services = requireServices()
const runPrefix = `turnline-test-pendcap:${crypto.randomUUID().slice(0, 8)}:`
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let tests = 0

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'pendcap')
})

afterAll(async () => {
  await bucket?.destroy()
  const admin = new IORedis(services.redisUrl)
  const keys = await admin.keys(`${runPrefix}*`)
  if (keys.length > 0) await admin.del(...keys)
  admin.disconnect()
})

const s3 = async () => {
  const namespace = `${runPrefix}${tests}:`
  const client = () => new RedisTcpCoordinator({ url: services.redisUrl, namespace })
  const coordinators = [client(), client()] as const
  return {
    store: bucket.store(`t${tests++}`),
    coordinators,
    close: async () => {
      await Promise.all(coordinators.map((c) => c.close()))
    },
  }
}
describePendingCapAdmissions('S3 on moto, Redis', s3)
describePendingCapRetries('S3 on moto, Redis', s3)

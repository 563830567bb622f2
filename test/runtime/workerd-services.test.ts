import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { startWorkerd } from '../support/runtimes.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'
import { smokeScenario } from './smoke-scenario.ts'

/**
 * The smoke scenario in workerd on the real backends: the S3 adapter against moto_server and
 * the Upstash adapters against redis-server (through the REST proxy), without
 * nodejs_compat.
 */
let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined
let proxy: UpstashProxy | undefined

beforeAll(async () => {
  const services = requireServices()
  bucket = await createTestBucket(services.s3, 'workerd')
  proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
})
afterAll(async () => {
  await proxy?.close()
  await bucket?.destroy()
})

describe('workerd on S3 and Upstash', () => {
  smokeScenario('workerd + S3 + Upstash', (vars) => {
    const { s3 } = requireServices()
    if (!bucket || !proxy) throw new Error('setup failed')
    return startWorkerd({
      ...vars,
      S3_BUCKET: bucket.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      UPSTASH_REDIS_REST_URL: proxy.url,
      UPSTASH_REDIS_REST_TOKEN: proxy.token,
      TURNLINE_REDIS_NAMESPACE: bucket.bucket,
    })
  })

  it('left the session in the bucket and took its leases through Upstash', async () => {
    if (!bucket || !proxy) throw new Error('setup failed')
    const keys = (await listAll(bucket.store(), '')).objects.map((o) => o.key)
    // The scenario's sessions (how many write their canonical log yet is the store's business).
    expect(keys.filter((key) => key.endsWith('/manifest.json')).length).toBeGreaterThan(0)
    // the rolled events: parts, as S3 cannot append (store/event-parts.ts)
    expect(keys.filter((key) => /\/events\/\d+-\d+\.jsonl$/.test(key)).length).toBeGreaterThan(0)
    expect(keys.some((key) => /\/log\/\d+\.json$/.test(key))).toBe(true)
    expect(proxy.requests.flatMap((r) => r.commands)).toContain('eval')
  })
})

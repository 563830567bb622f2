import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAncientSessions } from '../support/ancient-sessions.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startWorkerd } from '../support/runtimes.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * The Worker's cron trigger (wrangler.toml `[triggers]`, `scheduled` in functions/entries/worker.ts)
 * in workerd on S3 (moto): `wrangler dev --test-scheduled` fires it through `/__scheduled`, and
 * the sweep deletes the closed session that is past VT Code's 30 days, and nothing else.
 */
let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined
let worker: RuntimeProcess | undefined
let proxy: UpstashProxy | undefined

beforeAll(async () => {
  const { s3, redisUrl } = requireServices()
  bucket = await createTestBucket(s3, 'cron')
  // A Worker on a bucket needs Upstash beside it (its isolates share nothing else).
  proxy = await startUpstashProxy({ redisUrl })
  await writeAncientSessions(bucket.store(''))
  worker = await startWorkerd(
    {
      TURNLINE_API_KEYS: 'cron-key-0123456789abcdef=acme',
      S3_BUCKET: bucket.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      UPSTASH_REDIS_REST_URL: proxy.url,
      UPSTASH_REDIS_REST_TOKEN: proxy.token,
    },
    ['--test-scheduled'],
  )
})

afterAll(async () => {
  await worker?.stop()
  await proxy?.close()
  await bucket?.destroy()
})

describe('Worker cron trigger', () => {
  it('sweeps retention over the bucket', async () => {
    if (!worker || !bucket) throw new Error('setup failed')
    const fired = await fetch(`${worker.url}/__scheduled?cron=17+3+*+*+*`)
    expect(fired.status, worker.output()).toBe(200)
    // The sweep's log line marks its end (the trigger endpoint may answer before it).
    const deadline = Date.now() + 15_000
    while (!/"msg":"retention sweep"/.test(worker.output()) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(worker.output()).toMatch(/"msg":"retention sweep".*"deleted":1/)
    const keys = (
      await bucket.store('').list('acme/web/.vtcode/sessions/', { limit: 1000 })
    ).objects.map((o) => o.key)
    expect(keys.some((k) => k.includes('/ancient-closed/'))).toBe(false)
    expect(keys.some((k) => k.endsWith('/ancient-active/manifest.json'))).toBe(true)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SessionStore } from '../../src/store/session-store.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startWorkerd } from '../support/runtimes.ts'
import { threadCompleted, threadStarted } from '../support/sample-events.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * The Worker's cron trigger (wrangler.toml `[triggers]`, `scheduled` in functions/entries/worker.ts)
 * in workerd on S3 (moto): `wrangler dev --test-scheduled` fires it through `/__scheduled`, and
 * the sweep deletes the closed session that is past VT Code's 30 days, and nothing else.
 */
const DAY = 86_400_000
let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined
let worker: RuntimeProcess | undefined

beforeAll(async () => {
  const { s3 } = requireServices()
  bucket = await createTestBucket(s3, 'cron')
  const longAgo = Date.now() - 40 * DAY
  const sessions = new SessionStore({ store: bucket.store(''), clock: { now: () => longAgo } })
  for (const [id, close] of [
    ['ancient-closed', true],
    ['ancient-active', false],
  ] as const) {
    const ref = { tenant: 'acme', workspace: 'web', sessionId: id }
    await sessions.create(ref, id, { events: [threadStarted(id)] })
    if (close) await sessions.commit(await sessions.open(ref), { events: [threadCompleted(id, 0)] })
  }
  worker = await startWorkerd(
    {
      TURNLINE_API_KEYS: 'cron-key-0123456789abcdef=acme',
      S3_BUCKET: bucket.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    },
    ['--test-scheduled'],
  )
})

afterAll(async () => {
  await worker?.stop()
  await bucket?.destroy()
})

describe('Worker cron trigger', () => {
  it('sweeps retention over the bucket', async () => {
    if (!worker || !bucket) throw new Error('setup failed')
    const fired = await fetch(`${worker.url}/__scheduled?cron=17+3+*+*+*`)
    expect(fired.status, worker.output()).toBe(200)
    const keys = (
      await bucket.store('').list('acme/web/.vtcode/sessions/', { limit: 1000 })
    ).objects.map((o) => o.key)
    expect(keys.some((k) => k.includes('/ancient-closed/'))).toBe(false)
    expect(keys.some((k) => k.endsWith('/ancient-active/manifest.json'))).toBe(true)
    expect(worker.output()).toMatch(/"msg":"retention sweep".*"deleted":1/)
  })
})

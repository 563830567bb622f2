import { describe, expect, it } from 'vitest'
import { startDeno } from '../support/runtimes.ts'

/**
 * The Deno entry on Deno Deploy (DENO_DEPLOYMENT_ID, which the platform sets) with sessions in a
 * bucket and no Upstash does not start: its isolates would each keep their own leases and
 * idempotency records. The refusal comes before any S3 call, so no bucket is needed.
 */
describe('the Deno entry on Deno Deploy without Upstash', () => {
  it('does not start, naming the setting', async () => {
    const started = startDeno({
      TURNLINE_API_KEYS: 'deno-deploy-0123456789abcdef=t1',
      TURNLINE_MODEL_PROVIDER: 'demo',
      S3_BUCKET: 'turnline-deno-deploy',
      S3_ENDPOINT: 'http://127.0.0.1:9',
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      DENO_DEPLOYMENT_ID: 'k3x9v2',
    })
    await expect(started).rejects.toThrow(/it exited \(code 1/)
    await expect(started).rejects.toThrow(
      /UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: required with S3_BUCKET on Deno Deploy \(DENO_DEPLOYMENT_ID is set\)/,
    )
  })
})

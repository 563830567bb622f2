import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFreezableProxy } from '../support/freezable-proxy.ts'
import { startWorkerd } from '../support/runtimes.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * A Worker whose store cannot be used as configured says so on its first request, /healthz
 * included, with the name of what is wrong — not a 503 on every turn while /healthz answers 200
 * (functions/entries/startup-probe.ts). A fault no retry fixes is not retried.
 */
let backends: TestBackends | undefined

beforeAll(async () => {
  backends = await startTestBackends('workerd-faults')
})
afterAll(async () => {
  await backends?.close()
})

async function firstAnswer(vars: Record<string, string>): Promise<string> {
  const worker = await startWorkerd({ TURNLINE_SINGLE_TENANT: '1', ...vars }, [], 500)
  try {
    const health = await fetch(`${worker.url}/healthz`)
    expect(health.status).toBe(500)
    return ((await health.json()) as { error: { message: string } }).error.message
  } finally {
    await worker.stop()
  }
}

describe('workerd: a store that cannot be used stops the start', () => {
  it('a bucket that does not exist: named, not retried', async () => {
    if (!backends) throw new Error('setup failed')
    const message = await firstAnswer(backends.env({ S3_BUCKET: 'turnline-no-such-bucket' }))
    expect(message).toContain(
      'the server cannot start: invalid configuration:\n  - storage or coordinator unusable: S3 get failed: NoSuchBucket',
    )
    expect(message).not.toMatch(/attempts in \d+ ms/)
  })

  it.each([
    {
      // Isolates would each keep their own leases, idempotency records and replay guards.
      without: ['UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN'],
      named:
        'UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: required with S3_BUCKET here; this runtime serves from many instances at once',
    },
    {
      // The Worker has no other source of credentials.
      without: ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'],
      named: 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: required with S3_BUCKET here',
    },
  ])('S3_BUCKET without $without.0: named', async ({ without, named }) => {
    if (!backends) throw new Error('setup failed')
    const env = backends.env()
    for (const name of without) {
      expect(env[name]).toBeDefined()
      delete env[name]
    }
    expect(await firstAnswer(env)).toContain(named)
  })
})

describe('workerd: a store briefly unreachable at the first request', () => {
  it('answers 503 and starts at the next request, not 500 for the life of the isolate', async () => {
    if (!backends) throw new Error('setup failed')
    const env = backends.env({ TURNLINE_STORAGE_TIMEOUT_MS: '200', TURNLINE_IO_BUDGET_MS: '1000' })
    const s3 = await startFreezableProxy(env.S3_ENDPOINT ?? '')
    s3.freeze()
    // Ready once /healthz answers the outage: before, the isolate answered 500 from then on.
    const vars = { TURNLINE_SINGLE_TENANT: '1', ...env, S3_ENDPOINT: s3.url }
    const worker = await startWorkerd(vars, [], 503)
    try {
      const first = await fetch(`${worker.url}/healthz`)
      expect(first.status, worker.output()).toBe(503)
      expect(first.headers.get('retry-after')).not.toBeNull()
      s3.thaw()
      const next = await fetch(`${worker.url}/healthz`)
      expect(next.status, `${await next.text()}\n${worker.output()}`).toBe(200)
    } finally {
      await worker.stop()
      await s3.close()
    }
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLambdaBundle } from '../support/lambda-bundle.ts'
import { LAMBDA_URL_HOST } from '../support/lambda-runtime.ts'
import { startNodeEntry } from '../support/node-entry.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * What deno-permissions.test.ts and workerd-startup-faults.test.ts check for Deno and workerd,
 * for the two other entries: a store or coordinator that cannot be used as configured (a bucket
 * that does not exist, a token Upstash rejects) stops `npm start`'s entry (exit 1) and fails the
 * Lambda bundle's init, naming what is wrong — never a server that answers /healthz 200 and
 * retries every turn into a 503 (functions/entries/startup-probe.ts).
 */
let backends: TestBackends | undefined

beforeAll(async () => {
  backends = await startTestBackends('entry-faults')
})
afterAll(async () => {
  await backends?.close()
})

/** `npm start`'s entry on S3 + Upstash with `change` applied: its exit code and what it printed. */
async function nodeStart(change: Record<string, string>) {
  if (!backends) throw new Error('setup failed')
  const node = startNodeEntry(backends.env({ TURNLINE_SINGLE_TENANT: '1', PORT: '0', ...change }))
  try {
    const code = await Promise.race([
      node.exited,
      node.listening().then(() => 'listening' as const),
    ])
    return { code, output: node.output() }
  } finally {
    await node.stop()
  }
}

describe('npm start: a store or coordinator that cannot be used stops the start', () => {
  it.each<{ fault: string; change: Record<string, string>; named: string }>([
    {
      fault: 'a bucket that does not exist',
      change: { S3_BUCKET: 'turnline-no-such-bucket' },
      named:
        'turnline: invalid configuration:\n  - storage or coordinator unusable: S3 get failed: NoSuchBucket',
    },
    {
      fault: 'an Upstash token the REST endpoint rejects',
      change: { UPSTASH_REDIS_REST_TOKEN: 'not-the-token' },
      named:
        'storage or coordinator unusable: coordinator claimNamespace: Upstash rejected the REST token (401 Unauthorized)',
    },
  ])('$fault: exit 1, named, not retried', async ({ change, named }) => {
    const { code, output } = await nodeStart(change)
    expect(code).toBe(1)
    expect(output).toContain(named)
    expect(output).not.toMatch(/attempts in \d+ ms/)
  })
})

describe('the Lambda bundle: a store that cannot be used fails the init', () => {
  it('a bucket that does not exist: the init fails naming it', async () => {
    if (!backends) throw new Error('setup failed')
    const env = backends.env({
      TURNLINE_SINGLE_TENANT: '1',
      TURNLINE_ALLOWED_HOSTS: LAMBDA_URL_HOST,
      S3_BUCKET: 'turnline-no-such-bucket',
    })
    const failure = await loadLambdaBundle(env).then(
      async (bundle) => {
        await bundle.close()
        throw new Error('the init succeeded without its bucket')
      },
      (error: unknown) => String(error),
    )
    expect(failure).toContain('storage or coordinator unusable: S3 get failed: NoSuchBucket')
    expect(failure).not.toMatch(/attempts in \d+ ms/)
    // The bundle is built, then loaded: under load on the shared machine that takes most of a minute.
  }, 240_000)
})

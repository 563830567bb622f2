import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { DENO_FLAGS, startDeno } from '../support/runtimes.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { smokeScenario } from './smoke-scenario.ts'

/**
 * Deno with the permissions docs/deploy/deno-deploy.md gives. On S3 and Upstash it needs no
 * `--allow-sys` beyond `networkInterfaces` (the AWS SDK's default User-Agent called
 * `os.release()`, which Deno refuses without `--allow-sys=osRelease`: every storage call failed
 * and was retried as an outage). A permission the
 * deployment needs and does not have stops the start with a message naming the flag, instead of
 * a 503 on every request while /healthz answers 200.
 */
let backends: TestBackends | undefined
let dataDir = ''

beforeAll(async () => {
  backends = await startTestBackends('deno')
  dataDir = await mkdtemp(join(tmpdir(), 'turnline-deno-fs-'))
})
afterAll(async () => {
  await backends?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe('Deno on S3 and Upstash with --allow-net --allow-env --allow-read', () => {
  smokeScenario('Deno + S3 + Upstash', (vars) => {
    if (!backends) throw new Error('setup failed')
    // The scenario's own mock model answers; the backends' is not used here.
    return startDeno({ ...backends.env(), ...vars }, DENO_FLAGS)
  })

  it('left the session in the bucket and took its leases through Upstash', async () => {
    if (!backends) throw new Error('setup failed')
    const keys = (await listAll(backends.bucket.store(), '')).objects.map((o) => o.key)
    // The scenario's sessions (how many write their canonical log yet is the store's business).
    expect(keys.filter((key) => key.endsWith('/manifest.json')).length).toBeGreaterThan(0)
    // the rolled events: parts, as S3 cannot append (store/event-parts.ts)
    expect(keys.filter((key) => /\/events\/\d+-\d+\.jsonl$/.test(key)).length).toBeGreaterThan(0)
    expect(backends.proxy.requests.flatMap((r) => r.commands)).toContain('eval')
  })
})

describe('a permission Deno does not grant stops the start, naming the flag', () => {
  it('the filesystem store without --allow-write', async () => {
    const started = startDeno(
      { TURNLINE_SINGLE_TENANT: '1', TURNLINE_MODEL_PROVIDER: 'demo', TURNLINE_DATA_DIR: dataDir },
      DENO_FLAGS,
    )
    await expect(started).rejects.toThrow(
      `Deno permission not granted: --allow-write=${dataDir} (the filesystem store keeps sessions in ${dataDir}`,
    )
  })

  it("the bucket's host left out of --allow-net: no retries, the host and the flag named", async () => {
    if (!backends) throw new Error('setup failed')
    const env = backends.env({ TURNLINE_SINGLE_TENANT: '1' })
    const host = (url: string | undefined) => new URL(url ?? '').host
    const s3 = host(env.S3_ENDPOINT)
    // `deno serve` grants its own address; the model and Upstash are allowed, the bucket not.
    const net = `--allow-net=${host(env.OPENAI_BASE_URL)},${host(env.UPSTASH_REDIS_REST_URL)}`
    const error = await startDeno(env, [net, '--allow-env']).then(
      async (runtime) => {
        await runtime.stop()
        throw new Error('Deno started without access to the bucket')
      },
      (failure: unknown) => String(failure),
    )
    expect(error).toContain(
      `the runtime refused a permission this deployment needs: Requires net access to "${s3}", run again with the --allow-net flag`,
    )
    expect(error).not.toMatch(/attempts in \d+ ms/)
  })

  it('a bucket without credentials: no retries, the variables named', async () => {
    if (!backends) throw new Error('setup failed')
    const { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, ...env } = backends.env({
      TURNLINE_SINGLE_TENANT: '1',
      // No other source of credentials either: an empty home, no instance metadata service.
      HOME: dataDir,
      AWS_EC2_METADATA_DISABLED: 'true',
    })
    expect([S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY]).not.toContain(undefined)
    const error = await startDeno(env, DENO_FLAGS).then(
      async (runtime) => {
        await runtime.stop()
        throw new Error('Deno started without S3 credentials')
      },
      (failure: unknown) => String(failure),
    )
    expect(error).toContain('turnline: invalid configuration:')
    expect(error).toContain(
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: required with S3_BUCKET here; this runtime has no other source of S3 credentials than keys',
    )
    expect(error).not.toMatch(/attempts in \d+ ms/)
  })

  it('API keys without --allow-sys=networkInterfaces: the egress checks need the interfaces', async () => {
    // The checks of callbacks and tenants' calls refuse this host's own addresses.
    const started = startDeno(
      {
        TURNLINE_API_KEYS: 'deno-permissions-key-0123456789abcdef=acme',
        TURNLINE_STORE: 'memory',
        TURNLINE_MODEL_PROVIDER: 'demo',
      },
      DENO_FLAGS.filter((flag) => !flag.startsWith('--allow-sys')),
    )
    await expect(started).rejects.toThrow(
      'Deno permission not granted: --allow-sys=networkInterfaces (callbacks and tenants',
    )
  })

  it('the model endpoint left out of --allow-net', async () => {
    const started = startDeno(
      {
        TURNLINE_SINGLE_TENANT: '1',
        TURNLINE_STORE: 'memory',
        OPENAI_API_KEY: 'k',
        OPENAI_BASE_URL: 'https://models.example.test/v1',
      },
      ['--allow-net=127.0.0.1', '--allow-env'],
    )
    await expect(started).rejects.toThrow(
      'Deno permission not granted: --allow-net=models.example.test:443 (the model endpoint (OPENAI_BASE_URL))',
    )
  })
})

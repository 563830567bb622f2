import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

const repo = join(import.meta.dirname, '..', '..')
const tsx = join(repo, 'node_modules/.bin/tsx')

describe('npm run keys with the server storage variables', () => {
  const services = requireServices()
  let bucket: Awaited<ReturnType<typeof createTestBucket>>
  beforeAll(async () => {
    bucket = await createTestBucket(services.s3, 'keys-entry')
  })
  afterAll(() => bucket.destroy())

  // docker-compose.yml's server runs on REDIS_URL: the command takes the same environment.
  it('adds and lists a key on S3 with REDIS_URL, as Docker Compose configures the server', () => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      S3_BUCKET: bucket.bucket,
      S3_ENDPOINT: services.s3.endpoint,
      S3_REGION: services.s3.region,
      S3_ACCESS_KEY_ID: services.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: services.s3.secretAccessKey,
      REDIS_URL: services.redisUrl,
      TURNLINE_REDIS_NAMESPACE: `keys-entry-${Date.now().toString(36)}`,
    }
    const run = (...args: string[]) =>
      spawnSync(tsx, ['functions/entries/keys-cli.ts', ...args], {
        cwd: repo,
        env,
        encoding: 'utf8',
      })
    const added = run('add', 'acme', '--label', 'compose')
    expect(added.stderr).toContain('key for tenant acme')
    expect(added.status).toBe(0)
    const listed = run('list')
    expect(listed.status).toBe(0)
    expect(listed.stdout).toContain('acme')
    expect(listed.stdout).toContain('compose')
  })
})

describe('the keys command usage', () => {
  // A usage error prints the usage, naming the command the way it was run.
  const usage = (command: string, args: string[], cwd: string) => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TURNLINE_STORE: 'memory',
    }
    const run = spawnSync(command, [...args, 'bogus'], { cwd, env, encoding: 'utf8' })
    expect(run.status, run.stderr).toBe(2)
    return run.stderr.split('\n').find((line) => line.startsWith('usage:'))
  }

  it('names `npm run keys --` from source, and node with the file once built', {
    timeout: 180_000,
  }, async () => {
    expect(usage(tsx, ['functions/entries/keys-cli.ts'], repo)).toBe(
      'usage: npm run keys -- <command>',
    )
    // Inside the clone, as npm run build writes dist/: the bundle's package imports resolve.
    const out = await mkdtemp(join(repo, '.tmp', 'keys-build-'))
    try {
      const build = spawnSync(process.execPath, ['infra/build/build.mjs', 'node', '--out', out], {
        cwd: repo,
        encoding: 'utf8',
      })
      expect(build.status, build.stderr).toBe(0)
      expect(usage(process.execPath, ['node/keys.mjs'], out)).toBe(
        'usage: node node/keys.mjs <command>',
      )
      expect(usage(process.execPath, [join(out, 'node/keys.mjs')], repo)).toBe(
        `usage: node ${join(out.slice(repo.length + 1), 'node/keys.mjs')} <command>`,
      )
    } finally {
      await rm(out, { recursive: true, force: true })
    }
  })
})

import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { DENO_FLAGS, denoTaskFlags, startDeno } from '../support/runtimes.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { smokeScenario } from './smoke-scenario.ts'

/**
 * The Deno build (`node infra/build/build.mjs deno`, dist/deno/server.mjs) under `deno serve`:
 * built into a temp folder, then copied alone into a folder with no node_modules and no
 * deno.json, as a deployment of the bundle has it. The smoke scenario (a session, text and HTTP
 * tool turns against the mock model) runs against it on the filesystem store with the `serve`
 * task's permissions, and on S3 and Upstash (the S3 adapter a chunk loaded on first use) with
 * those of `serve:s3`.
 */
const root = new URL('../../', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'turnline-deno-bundle-'))
const built = spawnSync(process.execPath, ['infra/build/build.mjs', 'deno', '--out', work], {
  cwd: root,
  encoding: 'utf8',
})
if (built.status !== 0) throw new Error(`the Deno build failed:\n${built.stdout}${built.stderr}`)
const app = join(work, 'app')
cpSync(join(work, 'deno'), app, { recursive: true })
rmSync(join(work, 'deno'), { recursive: true, force: true })
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the Deno build', () => {
  it('is one server module plus chunks beside it, with the API reference renderer', () => {
    expect(existsSync(join(app, 'server.mjs'))).toBe(true)
    expect(existsSync(join(app, 'reference', 'scalar.js'))).toBe(true)
    expect(existsSync(join(app, 'node_modules'))).toBe(false)
  })
})

const bundle = { module: 'server.mjs', cwd: app }

smokeScenario('Deno, built (dist/deno/server.mjs)', (vars) =>
  startDeno({ TURNLINE_DATA_DIR: join(work, 'data'), ...vars }, denoTaskFlags('serve'), bundle),
)

describe('the Deno build on S3 and Upstash', () => {
  let backends: TestBackends | undefined
  beforeAll(async () => {
    backends = await startTestBackends('deno-bundle')
  })
  afterAll(async () => {
    await backends?.close()
  })

  smokeScenario('Deno, built, + S3 + Upstash', (vars) => {
    if (!backends) throw new Error('setup failed')
    return startDeno({ ...backends.env(), ...vars }, DENO_FLAGS, bundle)
  })

  it('left the session in the bucket and took its leases through Upstash', async () => {
    if (!backends) throw new Error('setup failed')
    const keys = (await listAll(backends.bucket.store(), '')).objects.map((o) => o.key)
    expect(keys.filter((key) => key.endsWith('/manifest.json')).length).toBeGreaterThan(0)
    expect(backends.proxy.requests.flatMap((r) => r.commands)).toContain('eval')
  })
})

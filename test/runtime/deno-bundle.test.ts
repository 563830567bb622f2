import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { denoTaskFlags, startDeno } from '../support/runtimes.ts'
import { smokeScenario } from './smoke-scenario.ts'

/**
 * The Deno build (`node infra/build/build.mjs deno`, dist/deno/server.mjs) under `deno serve`
 * with the `serve` task's permissions, on the filesystem store: built into a temp folder, then
 * copied alone into a folder with no node_modules and no deno.json, as a deployment of the
 * bundle has it. The smoke scenario (a session, text and HTTP tool turns against the mock model)
 * runs against it.
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

smokeScenario('Deno, built (dist/deno/server.mjs)', (vars) =>
  startDeno({ TURNLINE_DATA_DIR: join(work, 'data'), ...vars }, denoTaskFlags('serve'), {
    module: 'server.mjs',
    cwd: app,
  }),
)

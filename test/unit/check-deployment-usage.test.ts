import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '..', '..')

describe('check.mjs command line', () => {
  // Exit 1 means a promise of the storage is not kept (docs/deploy/storage.md): a mistyped
  // option must not read as one.
  it('answers an option it does not know with its usage and exit code 2', () => {
    const run = spawnSync(
      join(repo, 'node_modules/.bin/tsx'),
      ['functions/entries/check-deployment.ts', '--create-buckets'],
      { cwd: repo, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' },
    )
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("turnline: Unknown option '--create-buckets'")
    expect(run.stderr).toContain('usage: check.mjs [--create-bucket]')
    expect(run.stdout).toBe('')
  })
})

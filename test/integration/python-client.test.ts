import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { collect, repoRoot } from '../support/cli-process.ts'

/**
 * The Python client (clients/python) tested by its own pytest suite against `npm start` (the
 * suite starts it: clients/python/tests/conftest.py), with Debian's python3 and its packages
 * python3-httpx and python3-pytest (installed by .ci/run). Missing, they fail the test loudly.
 */
const PYTHON = '/usr/bin/python3'

describe('the Python client', { timeout: 600_000 }, () => {
  it('passes its pytest suite: sync and async flows, errors, torn connections resumed', async () => {
    expect(existsSync(PYTHON), `${PYTHON} is missing: apt-get install python3`).toBe(true)
    const probe = await collect(
      spawn(PYTHON, ['-c', 'import httpx, pytest'], { stdio: ['ignore', 'pipe', 'pipe'] }),
    )
    expect(
      probe.code,
      `the Python client's tests need Debian's python3-httpx and python3-pytest (apt-get install python3-httpx python3-pytest): ${probe.stderr}`,
    ).toBe(0)
    const run = await collect(
      spawn(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], {
        cwd: join(repoRoot, 'clients/python'),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      { timeoutMs: 540_000 },
    )
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toMatch(/\b\d+ passed\b/)
    expect(run.stdout).not.toMatch(/\b(failed|skipped|error)\b/)
  })
})

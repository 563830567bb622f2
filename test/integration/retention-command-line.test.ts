import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { createDeps } from '../../functions/deps.ts'
import { scheduledRetention } from '../../functions/entries/scheduled-retention.ts'
import { writeAncientSessions } from '../support/ancient-sessions.ts'

/**
 * The retention command (`npm run retention`, `node dist/node/retention.mjs`) logs its sweep in
 * the shape the Worker's and Lambda's scheduled sweeps do (docs/configuration.md#operator-log):
 * `deleted` the number of sessions deleted, never their list.
 */
const repo = join(import.meta.dirname, '..', '..')
const tsx = join(repo, 'node_modules/.bin/tsx')
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-retention-line-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('the retention sweep log line', { timeout: 60_000 }, () => {
  it('is the same from the retention command as from a scheduled sweep', async () => {
    await writeAncientSessions(new FsObjectStore({ root: join(dir, 'command'), durable: false }))
    const run = spawnSync(tsx, ['functions/entries/retention-cli.ts'], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TURNLINE_STORE: 'fs',
        TURNLINE_DATA_DIR: join(dir, 'command'),
      },
      encoding: 'utf8',
    })
    expect(run.status, run.stderr).toBe(0)
    const line = JSON.parse(run.stdout.trim()) as Record<string, unknown>
    expect(line).toMatchObject({
      level: 'info',
      msg: 'retention sweep',
      workspaces: 1,
      deleted: 1,
      failed: [],
      work: { failed: 0, done: 0 },
    })

    const scheduled: string[] = []
    const store = new FsObjectStore({ root: join(dir, 'scheduled'), durable: false })
    await writeAncientSessions(store)
    const deps = await createDeps({ TURNLINE_STORE: 'fs' }, { defaultStore: () => store })
    await scheduledRetention(deps, { now: Date.now() }, (entry) => scheduled.push(entry))
    const { ts: _a, ...fromCommand } = line
    const { ts: _b, ...fromSchedule } = JSON.parse(scheduled[0] ?? '{}') as Record<string, unknown>
    expect(fromSchedule).toEqual(fromCommand)
  })
})

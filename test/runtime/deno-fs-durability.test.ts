import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')
let dir = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-deno-fsync-'))
})
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

/**
 * On Deno a writer thread cannot fsync a folder through a descriptor opened on the main thread
 * (each thread has descriptors of its own): a create-only put's new name is then made durable on
 * the calling thread. Each put fsyncs its temp file and its folder, on whichever thread.
 */
describe('the fs store on Deno', () => {
  it('fsyncs the folder of every name a create-only put makes', async () => {
    const { stdout } = await promisify(execFile)(
      join(root, 'node_modules/.bin/deno'),
      [
        'run',
        '--quiet',
        '--allow-read',
        '--allow-write',
        '--allow-env',
        '--config',
        join(root, 'deno.json'),
        join(root, 'test/support/fs-syncs-deno.ts'),
        join(dir, 'store'),
        '5',
      ],
      { cwd: root },
    )
    const { threads, here } = JSON.parse(stdout) as { threads: number; here: number }
    expect(threads + here).toBe(10)
    expect(threads).toBeGreaterThanOrEqual(5)
  }, 60_000)
})

import { execFile } from 'node:child_process'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { refusal, value } from '../support/runner-results.ts'
import { runnerWithClient, runToEnd } from '../support/sandbox-commands.ts'
import { tenantUid } from '../support/tenant-uid.ts'

/**
 * A tenant holding so many directory entries that measuring its disk use never ends in time
 * must not slip past its disk quota. The walk's time limit is made tiny here (200 ms) and the
 * tree big enough to exceed it (400,000 hard links: du takes well over half a second); the
 * quota is 32 MiB, measured every second.
 */
const secret = 'disk-walk-runner-secret-0123456789'
const WALK_MS = 200
let root: string
/** The runner's root: the workspaces are `<tenant>/<session>` in it. */
const runnerRoot = () => join(root, 'runner')
let runner: RunnerProcess
let client: HttpSandboxRunner

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: tenant limits need a root runner')
  root = await mkdtemp(join(tmpdir(), 'turnline-disk-walk-'))
  await chmod(root, 0o711)
  ;({ process: runner, client } = await runnerWithClient({
    root: runnerRoot(),
    secret,
    env: {
      TURNLINE_SANDBOX_TENANT_DISK_MB: '32',
      TURNLINE_SANDBOX_DISK_CHECK_SECONDS: '1',
      TURNLINE_SANDBOX_DISK_WALK_TIMEOUT_MS: String(WALK_MS),
    },
  }))
})

afterAll(async () => {
  await runner?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

/**
 * 400 folders of the same 1,000 empty files, as the tenant's own user (what a command of it
 * could make over any length of time; made here at once, so no measurement sees it half-made).
 */
async function hoard(where: SandboxScope) {
  const uid = await tenantUid(runnerRoot(), where.tenant)
  const script =
    'mkdir -p hoard/0 && cd hoard && (cd 0 && seq 1 1000 | xargs touch) && ' +
    'for i in $(seq 1 399); do cp -al 0 "$i"; done'
  await promisify(execFile)('sh', ['-c', script], {
    cwd: join(runnerRoot(), where.tenant, where.sessionId),
    uid,
    gid: uid,
  })
}

describe('a disk walk that never ends in time', () => {
  it('counts as over the quota from the second slow walk on: the command writing past it is ended, starts are refused, and erasing the workspace frees the tenant', async () => {
    const first: SandboxScope = { tenant: 'hoarder', sessionId: 'walk-1' }
    expect((await runToEnd(client, first, 'echo ready')).output).toBe('ready\n')
    await hoard(first)

    // One slow walk keeps the last figure: the start is admitted. The next walk, a second later,
    // is slow again: the usage is unknown, over the quota, and the command is ended.
    const grown = await runToEnd(client, first, 'fallocate -l 48M big && echo filled && sleep 600')
    expect(grown.output).toContain('filled')
    expect(grown.exitCode).toBeDefined()
    expect(grown.output).toContain('[runner] stopped')
    expect(grown.output).toMatch(/disk use cannot be measured: walking them took longer than/)

    const second: SandboxScope = { tenant: 'hoarder', sessionId: 'walk-2' }
    const start = await client.start(second, {
      requestId: 'req_disk_walk_refused',
      toolCallId: 'call_disk_walk_refused',
      cmd: 'echo never',
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 64,
    })
    expect(refusal(start)).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/cannot be measured.*delete a session to erase its workspace/),
      details: { limit: 'TURNLINE_SANDBOX_TENANT_DISK_MB' },
    })
    const write = await client.writeFile(second, { path: 'notes.txt', content: 'x' })
    expect(refusal(write).message).toContain('cannot be measured')

    // Another tenant is measured on its own.
    const other: SandboxScope = { tenant: 'neighbour', sessionId: 'walk-3' }
    expect((await runToEnd(client, other, 'echo fine')).output).toBe('fine\n')

    // Deleting the session erases its workspace: the tenant is measured afresh and works again.
    expect(value(await client.eraseWorkspace(first))).toEqual({ state: 'erased' })
    expect((await runToEnd(client, second, 'echo freed')).output).toBe('freed\n')
  }, 90_000)
})

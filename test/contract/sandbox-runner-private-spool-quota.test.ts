import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { exists, privateSpoolPath, recordedExit, startRequest } from '../support/private-spools.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { refusal, value } from '../support/runner-results.ts'
import { runnerWithClient, runToEnd } from '../support/sandbox-commands.ts'

/**
 * A private spool (`private_output`: a command hook's answer, in the runner's own folder) counts
 * in its tenant's disk use as its workspaces do: past the quota the tenant's next start and file
 * write are refused, and a hook writing past it is ended, saying why, before the spool cap.
 */
const secret = 'private-spool-quota-secret-0123456789'
let root: string
let runner: RunnerProcess
let client: HttpSandboxRunner
let sessions = 0
let requests = 0
const scope = (tenant: string): SandboxScope => ({ tenant, sessionId: `quota-${++sessions}` })
const env = {
  TURNLINE_SANDBOX_TENANT_DISK_MB: '8',
  TURNLINE_SANDBOX_DISK_CHECK_SECONDS: '1',
  TURNLINE_SANDBOX_SPOOL_MB: '64',
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: tenant limits need a root runner')
  root = await mkdtemp(join(tmpdir(), 'turnline-spool-quota-'))
  await chmod(root, 0o711)
  ;({ process: runner, client } = await runnerWithClient({
    root: join(root, 'runner'),
    secret,
    env,
  }))
})

afterAll(async () => {
  await runner?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

const QUOTA = /over its disk quota of 8 MiB \(TURNLINE_SANDBOX_TENANT_DISK_MB\)/

/** A private command run to its end; its id. */
async function privateRun(where: SandboxScope, cmd: string) {
  const started = value(
    await client.start(
      where,
      startRequest(`req_spool_quota_${++requests}`, cmd, { maxOutputBytes: 4096 }),
    ),
  )
  const id = started.execSessionId
  const done = value(
    await client.wait(where, { execSessionId: id, timeoutMs: 30_000, maxOutputBytes: 4096 }),
  )
  expect(done.state.status).toBe('exited')
  // Its exit recorded: the runner measures anew from then on.
  await recordedExit(join(root, 'runner'), where, id)
  return { id, total: done.totalOutputBytes }
}

describe("a private spool in its tenant's disk use", () => {
  it("past the quota refuses the tenant's next start and file write; closed, it frees the room", async () => {
    const hooks = scope('hooker')
    const { id } = await privateRun(hooks, 'head -c 12582912 /dev/zero; echo written')
    expect(await exists(privateSpoolPath(join(root, 'runner'), hooks, id))).toBe(true)

    const next = await client.start(
      scope('hooker'),
      startRequest(`req_spool_quota_${++requests}`, 'echo next', {
        privateOutput: false,
        maxOutputBytes: 1024,
      }),
    )
    expect(refusal(next)).toMatchObject({ code: 'conflict', message: expect.stringMatching(QUOTA) })
    const write = await client.writeFile(hooks, { path: 'notes.txt', content: 'x' })
    expect(refusal(write).message).toMatch(QUOTA)
    expect((await runToEnd(client, scope('neighbour'), 'echo fine')).output).toBe('fine\n')

    value(await client.close(hooks, id))
    expect((await runToEnd(client, scope('hooker'), 'echo room-again')).output).toBe('room-again\n')
  })

  it('still counts across a crash of the runner, among many sessions without one', {
    timeout: 60_000,
  }, async () => {
    const hooks = scope('restarted')
    for (let i = 0; i < 40; i++) {
      const closed = scope('restarted')
      value(await client.close(closed, (await privateRun(closed, 'echo closed-hook')).id))
    }
    const { id } = await privateRun(hooks, 'head -c 12582912 /dev/zero; echo written')
    await runner.crash()
    ;({ process: runner, client } = await runnerWithClient({
      root: join(root, 'runner'),
      secret,
      env,
    }))
    // The restarted runner finds the spool among the tenant's sessions: still over the quota.
    const next = await client.start(
      scope('restarted'),
      startRequest(`req_spool_quota_${++requests}`, 'echo next', {
        privateOutput: false,
        maxOutputBytes: 1024,
      }),
    )
    expect(refusal(next)).toMatchObject({ code: 'conflict', message: expect.stringMatching(QUOTA) })
    value(await client.close(hooks, id))
    expect((await runToEnd(client, scope('restarted'), 'echo room-again')).output).toBe(
      'room-again\n',
    )
  })

  it('a hook writing past the quota is ended, saying why', { timeout: 60_000 }, async () => {
    const where = scope('chatty')
    const { id, total } = await privateRun(
      where,
      'while :; do head -c 1048576 /dev/zero || break; sleep 0.1; done; echo gave-up',
    )
    // The note goes in when the runner ends the command; what the pipe still held follows it.
    const offset = Math.max(0, total - 1024 * 1024)
    const end = value(
      await client.readSpool(where, { execSessionId: id, offset, length: total - offset }),
    )
    const output = Buffer.from(end.bytes).toString('utf8')
    expect(output).toContain('[runner] stopped')
    expect(output).not.toContain('gave-up')
    expect(output).toMatch(QUOTA)
    value(await client.close(where, id))
  })
})

import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { ExecSnapshot, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { exists, privateSpoolPath, recordedExit, startRequest } from '../support/private-spools.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'
import { value } from '../support/runner-results.ts'

/**
 * A private spool left unclosed — the server stopped between a hook's start and its close, or
 * the hook left a process holding its output — is swept once its command has ended longer than
 * TURNLINE_SANDBOX_PRIVATE_SPOOL_GRACE_SECONDS ago (a few seconds here), and kept before: right
 * after its command ended, across a runner restart, and while a process still writes it. The
 * command's record and claim go with it; a start retried under its request id still does not
 * run it again.
 */
const secret = 'private-spool-sweep-secret-0123456789'
let root: string
let runner: RunnerProcess
let client: HttpSandboxRunner
let sessions = 0
let requests = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `sweep-${++sessions}` })

async function startOwnRunner(graceSeconds: number) {
  runner = await startRunnerProcess({
    root,
    secret,
    env: { TURNLINE_SANDBOX_PRIVATE_SPOOL_GRACE_SECONDS: String(graceSeconds) },
  })
  client = new HttpSandboxRunner({ url: runner.url, secret })
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnline-spool-sweep-'))
  await startOwnRunner(2)
})

afterAll(async () => {
  await runner?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

const privateSpool = (scope: SandboxScope, id: string) => privateSpoolPath(root, scope, id)
const text = (snap: ExecSnapshot) => `${snap.output.head}${snap.output.tail}`
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function started(scope: SandboxScope, cmd: string) {
  requests += 1
  const snap = value(await client.start(scope, startRequest(`req_sweep_${requests}`, cmd)))
  return snap.execSessionId
}

const waited = async (scope: SandboxScope, id: string) =>
  value(await client.wait(scope, { execSessionId: id, timeoutMs: 20_000, maxOutputBytes: 65_536 }))

const recorded = (scope: SandboxScope, id: string) => recordedExit(root, scope, id)
const stateOf = (scope: SandboxScope) => join(root, '.runner-state', scope.tenant, scope.sessionId)

/** Resolves once the spool is gone; fails if it is still there after `ms`. */
async function swept(scope: SandboxScope, id: string, ms: number): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; await pause(100)) {
    if (!(await exists(privateSpool(scope, id)))) break
  }
  expect(await exists(privateSpool(scope, id))).toBe(false)
  expect(await exists(join(stateOf(scope), 'exec', `${id}.json`))).toBe(false)
  const read = await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1024 })
  expect(read.ok).toBe(false)
  if (!read.ok) expect(read.refusal.code).toBe('not_found')
}

async function readable(scope: SandboxScope, id: string): Promise<string> {
  const chunk = value(await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1024 }))
  return Buffer.from(chunk.bytes).toString('utf8')
}

describe('a private spool never closed', () => {
  it('is read after its command ended, then swept once the grace has passed', {
    timeout: 60_000,
  }, async () => {
    const scope = fresh()
    const id = await started(scope, 'echo hook-answer')
    const done = await waited(scope, id)
    expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
    expect(text(done)).toBe('hook-answer\n')
    expect(await readable(scope, id)).toBe('hook-answer\n')
    const claim = join(stateOf(scope), 'requests', `req_sweep_${requests}.json`)
    expect(await exists(claim)).toBe(true)
    await swept(scope, id, 20_000)
    expect(await exists(claim)).toBe(false)
    // Its request id retried: not run again (refused as its reads are), another command a conflict.
    const again = await client.start(
      scope,
      startRequest(`req_sweep_${requests}`, 'echo hook-answer'),
    )
    expect(again.ok ? 'ran again' : again.refusal.code).toBe('not_found')
    const other = await client.start(scope, startRequest(`req_sweep_${requests}`, 'echo other'))
    expect(other.ok ? 'ran' : other.refusal.code).toBe('conflict')
    expect(await readdir(join(stateOf(scope), 'exec'))).toEqual([])
    expect(await readdir(join(stateOf(scope), 'requests'))).toEqual([])
  })

  it('is kept while a process the command left still holds its output, and swept after it ends', {
    timeout: 60_000,
  }, async () => {
    const scope = fresh()
    const id = await started(scope, '(sleep 9; echo late) & echo hook-answer')
    const done = await waited(scope, id)
    expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
    expect(done.spool.complete).toBe(false)
    await recorded(scope, id)
    // Past the grace since the exit, two passes at least: the process still holds the output.
    await pause(4500)
    expect(await exists(privateSpool(scope, id))).toBe(true)
    expect(await readable(scope, id)).toBe('hook-answer\n')
    await swept(scope, id, 30_000)
  })

  it('survives a runner restart within the grace (finished or lost), then is swept', {
    timeout: 90_000,
  }, async () => {
    await runner.stop()
    await startOwnRunner(8)
    const scope = fresh()
    const finished = await started(scope, 'echo hook-answer')
    expect((await waited(scope, finished)).state).toEqual({ status: 'exited', exitCode: 0 })
    await recorded(scope, finished)
    const lost = await started(scope, 'echo running-answer; sleep 10')
    for (let polls = 0; polls < 100 && !(await readable(scope, lost)); polls++) await pause(100)
    await runner.crash()
    await startOwnRunner(8)
    expect(await exists(privateSpool(scope, finished))).toBe(true)
    expect(await exists(privateSpool(scope, lost))).toBe(true)
    const polled = value(
      await client.poll(scope, {
        execSessionId: finished,
        yieldTimeMs: 0,
        maxOutputBytes: 1024,
        since: 0,
      }),
    )
    expect(text(polled)).toBe('hook-answer\n')
    expect(await readable(scope, lost)).toBe('running-answer\n')
    await swept(scope, finished, 30_000)
    await swept(scope, lost, 30_000)
  })
})

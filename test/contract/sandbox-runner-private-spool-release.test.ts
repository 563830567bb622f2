import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { ExecSnapshot, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { exists, privateSpoolPath, recordedExit, startRequest } from '../support/private-spools.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'
import { value } from '../support/runner-results.ts'

/**
 * A private spool (`private_output`, a command hook's answer) lies in the runner's own folder,
 * counted in no tenant's disk use: it is there while the answer may still be read — after the
 * command finished, after a runner restart — and gone once the command is closed, or its
 * workspace erased. A workspace spool is left where it is.
 */
const secret = 'private-spool-release-secret-0123456789'
let root: string
let runner: RunnerProcess
let client: HttpSandboxRunner
let sessions = 0
let requests = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `release-${++sessions}` })

async function startOwnRunner() {
  runner = await startRunnerProcess({ root, secret })
  client = new HttpSandboxRunner({ url: runner.url, secret })
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnline-private-spool-'))
  await startOwnRunner()
})

afterAll(async () => {
  await runner?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

const privateSpool = (scope: SandboxScope, id: string) => privateSpoolPath(root, scope, id)
const text = (snap: ExecSnapshot) => `${snap.output.head}${snap.output.tail}`

async function finished(scope: SandboxScope, cmd: string, privateOutput: boolean) {
  requests += 1
  const started = value(
    await client.start(scope, startRequest(`req_release_${requests}`, cmd, { privateOutput })),
  )
  const id = started.execSessionId
  const done = value(
    await client.wait(scope, { execSessionId: id, timeoutMs: 20_000, maxOutputBytes: 65_536 }),
  )
  expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
  return id
}

const recorded = (scope: SandboxScope, id: string) => recordedExit(root, scope, id)

async function closedAndGone(scope: SandboxScope, id: string, answer: string) {
  expect(answer).toBe('hook-answer\n')
  const closed = value(await client.close(scope, id))
  expect(closed.state).toEqual({ status: 'exited', exitCode: 0 })
  expect(await exists(privateSpool(scope, id))).toBe(false)
  const read = await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1024 })
  expect(read.ok).toBe(false)
  if (!read.ok) expect(read.refusal.code).toBe('not_found')
  // A repeated close still answers (nothing left to capture).
  const again = value(await client.close(scope, id))
  expect(again.state).toEqual({ status: 'exited', exitCode: 0 })
}

describe('a private spool', () => {
  it('stays while its answer may be read, and goes when the command is closed', async () => {
    const scope = fresh()
    const id = await finished(scope, 'echo hook-answer', true)
    await recorded(scope, id)
    expect(await exists(privateSpool(scope, id))).toBe(true)
    const chunk = value(
      await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1024 }),
    )
    const answer = Buffer.from(chunk.bytes).toString('utf8')
    await closedAndGone(scope, id, answer)
  })

  it('survives a runner restart, then goes when the command is closed', {
    timeout: 60_000,
  }, async () => {
    const scope = fresh()
    const id = await finished(scope, 'echo hook-answer', true)
    await recorded(scope, id)
    await runner.crash()
    await startOwnRunner()
    expect(await exists(privateSpool(scope, id))).toBe(true)
    const polled = value(
      await client.poll(scope, {
        execSessionId: id,
        yieldTimeMs: 0,
        maxOutputBytes: 1024,
        since: 0,
      }),
    )
    await closedAndGone(scope, id, text(polled))
  })

  it('goes with its workspace when the session is erased, closed or not', async () => {
    const scope = fresh()
    const id = await finished(scope, 'echo hook-answer', true)
    await recorded(scope, id)
    expect(await exists(privateSpool(scope, id))).toBe(true)
    expect(value(await client.eraseWorkspace(scope))).toEqual({ state: 'erased' })
    expect(await exists(privateSpool(scope, id))).toBe(false)
  })
})

describe('a command that left a process writing its output', () => {
  const stateFile = (scope: SandboxScope, id: string) =>
    join(root, '.runner-state', scope.tenant, scope.sessionId, 'exec', `${id}.json`)
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  async function lingering(scope: SandboxScope, cmd: string) {
    requests += 1
    const { execSessionId: id } = value(
      await client.start(scope, startRequest(`req_release_${requests}`, cmd)),
    )
    const done = value(
      await client.wait(scope, { execSessionId: id, timeoutMs: 20_000, maxOutputBytes: 65_536 }),
    )
    expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
    expect(done.spool.complete).toBe(false)
    await recorded(scope, id)
    return id
  }

  /** Polls from offset 0 until `until` holds of the answer (at most 15 s). */
  async function polledUntil(scope: SandboxScope, id: string, until: (s: ExecSnapshot) => boolean) {
    for (let polls = 0; ; polls++) {
      const snap = value(
        await client.poll(scope, {
          execSessionId: id,
          yieldTimeMs: 0,
          maxOutputBytes: 1024,
          since: 0,
        }),
      )
      if (until(snap) || polls >= 150) return snap
      await pause(100)
    }
  }

  const allOfIt = async (scope: SandboxScope, id: string) => {
    const polled = await polledUntil(scope, id, () => true)
    const read = value(
      await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1024 }),
    )
    return { polled: text(polled), read: Buffer.from(read.bytes).toString('utf8') }
  }

  it('has its record written again with the whole output once that process let go', {
    timeout: 60_000,
  }, async () => {
    const scope = fresh()
    const id = await lingering(scope, 'echo early; (sleep 3; echo late) &')
    const settled = JSON.parse(await readFile(stateFile(scope, id), 'utf8'))
    expect(settled).toMatchObject({ total_output_bytes: 6, spool_complete: false })
    await polledUntil(scope, id, (snap) => snap.spool.complete)
    for (let looks = 0; looks < 100; looks++) {
      if ((await readFile(stateFile(scope, id), 'utf8')).includes('"spool_complete":true')) break
      await pause(50)
    }
    const rewritten = JSON.parse(await readFile(stateFile(scope, id), 'utf8'))
    expect(rewritten).toMatchObject({ total_output_bytes: 11, spool_complete: true })
    await runner.crash()
    await startOwnRunner()
    expect(await allOfIt(scope, id)).toEqual({ polled: 'early\nlate\n', read: 'early\nlate\n' })
  })

  it('answers what that process wrote after the exit across a crash of the runner', {
    timeout: 60_000,
  }, async () => {
    const scope = fresh()
    const id = await lingering(scope, 'echo early; (sleep 3; echo late; sleep 4) &')
    await polledUntil(scope, id, (snap) => text(snap).includes('late'))
    await runner.crash()
    await startOwnRunner()
    expect(await allOfIt(scope, id)).toEqual({ polled: 'early\nlate\n', read: 'early\nlate\n' })
  })
})

describe('a workspace spool', () => {
  it('is left in the workspace when its command is closed', async () => {
    const scope = fresh()
    const id = await finished(scope, 'echo own', false)
    value(await client.close(scope, id))
    const spool = join(
      root,
      scope.tenant,
      scope.sessionId,
      '.vtcode/context/tool_outputs',
      `write_stdin_${id}.txt`,
    )
    expect(await readFile(spool, 'utf8')).toBe('own\n')
  })
})

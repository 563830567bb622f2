import { chmod, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { ExecSnapshot, RunnerResult, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'
import { value } from '../support/runner-results.ts'
import { untilOutput } from '../support/sandbox-commands.ts'

/**
 * A command replaces its own output spool with a symlink (to the runner's environment, to a host
 * file), a FIFO or another file. Whatever it does, the runner answers with the bytes the command
 * printed, or refuses: never the bytes of another file, never a hang. Before and after a restart.
 */
const secret = 'spool-attack-runner-secret-0123456789'
const planted = 'sk-planted-in-the-spool-runner-environment'
const hostSecret = 'host-file-secret-never-for-tenants'
const SPOOL = '.vtcode/context/tool_outputs/write_stdin_$VTCODE_EXEC_SESSION_ID.txt'
const OWN = 70_000
let root: string
let outside: string
let hostFile: string
let runner: RunnerProcess
let client: HttpSandboxRunner
let sessions = 0
let requests = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `spool-${++sessions}` })

async function startOwnRunner() {
  runner = await startRunnerProcess({ root, secret, env: { OPENAI_API_KEY: planted } })
  client = new HttpSandboxRunner({ url: runner.url, secret })
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnline-spool-attacks-'))
  outside = await mkdtemp(join(tmpdir(), 'turnline-spool-outside-'))
  hostFile = join(outside, 'host-secret.txt')
  await writeFile(hostFile, `${hostSecret}\n`.repeat(4000))
  await chmod(hostFile, 0o600)
  await startOwnRunner()
})

afterAll(async () => {
  await runner?.stop()
  for (const dir of [root, outside]) if (dir) await rm(dir, { recursive: true, force: true })
})

/** Prints OWN bytes of "a", then puts `replace` (a shell line using "$f") in place of its spool. */
const swapping = (replace: string, after = '') =>
  `head -c ${OWN} /dev/zero | tr '\\0' a; f=${SPOOL}; rm -f "$f"; ${replace}; echo; echo swapped${after}`

const leaked = (text: string) =>
  [planted, secret, hostSecret, 'TURNLINE_', 'PATH='].filter((s) => text.includes(s))

async function start(scope: SandboxScope, cmd: string) {
  requests += 1
  return value(
    await client.start(scope, {
      requestId: `req_spool_attack_${requests}`,
      toolCallId: `call_${requests}`,
      cmd,
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 65_536,
    }),
  )
}

const waitFor = (scope: SandboxScope, id: string) =>
  client.wait(scope, { execSessionId: id, timeoutMs: 20_000, maxOutputBytes: 65_536, since: 0 })

const text = (snap: ExecSnapshot) => `${snap.output.head}${snap.output.tail}`

/** The command's own bytes: all of them, or a clear refusal. Never another file's. */
function ownOrRefused(result: RunnerResult<ExecSnapshot>, label: string) {
  if (!result.ok) {
    expect(`${label}: ${result.refusal.code}`).toMatch(/: (path_escape|conflict|not_found)$/)
    expect(result.refusal.message).toMatch(/spool/)
    return
  }
  expect(leaked(text(result.value)), label).toEqual([])
  expect(text(result.value), label).toMatch(/^a+(\nswapped\n)?$/)
}

async function readSpoolOwnOrRefused(scope: SandboxScope, id: string, label: string) {
  const chunk = await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1 << 20 })
  if (!chunk.ok) {
    expect(`${label}: ${chunk.refusal.code}`).toMatch(/: (path_escape|conflict|not_found)$/)
    return
  }
  const bytes = Buffer.from(chunk.value.bytes).toString('utf8')
  expect(leaked(bytes), label).toEqual([])
  expect(bytes, label).toMatch(/^a+(\nswapped\n)?$/)
}

/** Resolves once the runner has written the command's exit into its record. */
async function recorded(scope: SandboxScope, id: string): Promise<void> {
  const file = join(root, '.runner-state', scope.tenant, scope.sessionId, 'exec', `${id}.json`)
  for (;;) {
    const record = await readFile(file, 'utf8').catch(() => '')
    if (record.includes('"exit_code"')) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const targets = () =>
  [
    ['/proc/self/environ', 'ln -s /proc/self/environ "$f"'],
    ['a host file outside every workspace', `ln -s ${hostFile} "$f"`],
  ] as const

describe('a command that swaps its own spool for a symlink, while the runner knows it', () => {
  for (const [label, index] of [
    ['/proc/self/environ', 0],
    ['a host file', 1],
  ] as const) {
    it(`to ${label}: captures and read-spool hold the command's own bytes`, async () => {
      const scope = fresh()
      const [, replace] = targets()[index]
      const started = await start(scope, swapping(replace))
      const done = value(await waitFor(scope, started.execSessionId))
      expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
      expect(done.totalOutputBytes).toBe(OWN + '\nswapped\n'.length)
      expect(leaked(text(done))).toEqual([])
      expect(text(done)).toMatch(/^a+\nswapped\n$/)
      const chunk = value(
        await client.readSpool(scope, {
          execSessionId: started.execSessionId,
          offset: 0,
          length: 1 << 20,
        }),
      )
      const bytes = Buffer.from(chunk.bytes).toString('utf8')
      expect(leaked(bytes)).toEqual([])
      expect(bytes).toBe(`${'a'.repeat(OWN)}\nswapped\n`)
      const polled = value(
        await client.poll(scope, {
          execSessionId: started.execSessionId,
          yieldTimeMs: 0,
          maxOutputBytes: 65_536,
          since: OWN - 10,
        }),
      )
      expect(text(polled)).toBe(`${'a'.repeat(10)}\nswapped\n`)
    })
  }
})

describe('a swapped spool after the runner restarted', () => {
  it('answers with the own bytes or refuses, for finished and lost commands; a FIFO never hangs', {
    timeout: 90_000,
  }, async () => {
    const cases: Array<[string, SandboxScope, string, boolean]> = []
    for (const [label, replace] of [
      ...targets(),
      ['a FIFO', 'mkfifo "$f"'],
      ['another regular file', `printf '%s\\n' forged-spool-bytes > "$f"`],
    ] as const) {
      const scope = fresh()
      const started = await start(scope, swapping(replace))
      value(await waitFor(scope, started.execSessionId))
      await recorded(scope, started.execSessionId)
      cases.push([`finished, ${label}`, scope, started.execSessionId, false])
    }
    // Still running when the runner dies: its record has no exit (nor output size).
    for (const [label, replace] of targets()) {
      const scope = fresh()
      const started = await start(scope, swapping(replace, '; sleep 8'))
      await untilOutput(client, scope, started.execSessionId, 'swapped', OWN)
      cases.push([`lost, ${label}`, scope, started.execSessionId, true])
    }

    await runner.crash()
    await startOwnRunner()

    for (const [label, scope, id, lost] of cases) {
      const polled = await client.poll(scope, {
        execSessionId: id,
        yieldTimeMs: 0,
        maxOutputBytes: 65_536,
        since: 0,
      })
      ownOrRefused(polled, label)
      if (polled.ok) expect(polled.value.state.status, label).toBe(lost ? 'lost' : 'exited')
      await readSpoolOwnOrRefused(scope, id, label)
    }
    // Each was replaced (a symlink, a FIFO, a file of another identity): refused outright.
    for (const [label, scope, id] of cases) {
      const polled = await client.poll(scope, {
        execSessionId: id,
        yieldTimeMs: 0,
        maxOutputBytes: 1024,
        since: 0,
      })
      expect(polled.ok, label).toBe(false)
    }
  })
})

describe('a record of format 1 (no spool identity)', () => {
  it('is read; its spool is reopened as a regular file through no symlink, else refused', async () => {
    const scope = fresh()
    const record = await readFile(
      new URL('../fixtures/runner/exec-record-v1.json', import.meta.url),
      'utf8',
    )
    const { exec_session_id: id, spool_path: spoolPath } = JSON.parse(record) as {
      exec_session_id: string
      spool_path: string
    }
    await start(scope, 'true') // makes the workspace
    const workspace = join(root, scope.tenant, scope.sessionId)
    const state = join(root, '.runner-state', scope.tenant, scope.sessionId, 'exec')
    await writeFile(join(state, `${id}.json`), record)
    const spool = join(workspace, spoolPath)
    await writeFile(spool, 'from-format-1\n')
    const polled = value(
      await client.poll(scope, {
        execSessionId: id,
        yieldTimeMs: 0,
        maxOutputBytes: 1024,
        since: 0,
      }),
    )
    expect(polled).toMatchObject({
      state: { status: 'exited', exitCode: 0 },
      output: { head: 'from-format-1\n' },
    })

    await rm(spool)
    await symlink(hostFile, spool)
    for (const result of [
      await client.poll(scope, {
        execSessionId: id,
        yieldTimeMs: 0,
        maxOutputBytes: 1024,
        since: 0,
      }),
      await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1024 }),
    ]) {
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.refusal.code).toBe('path_escape')
    }
  })
})

describe('a command started with private_output', () => {
  it("keeps its spool out of the session's other commands' reach, before and after a restart", {
    timeout: 60_000,
  }, async () => {
    const scope = fresh()
    requests += 1
    const started = value(
      await client.start(scope, {
        requestId: `req_spool_attack_${requests}`,
        toolCallId: `call_${requests}`,
        cmd: `head -c ${OWN} /dev/zero | tr '\\0' a; echo; echo own`,
        tty: false,
        yieldTimeMs: 0,
        maxOutputBytes: 65_536,
        privateOutput: true,
      }),
    )
    const id = started.execSessionId
    const done = value(await waitFor(scope, id))
    expect(done.totalOutputBytes).toBe(OWN + '\nown\n'.length)
    // Nothing of it in the workspace for another command to read or rewrite.
    const probe = await start(
      scope,
      `ls .vtcode/context/tool_outputs/ | grep -c ${id} || true; cat .vtcode/context/tool_outputs/*${id}* 2>/dev/null | wc -c`,
    )
    expect(text(value(await waitFor(scope, probe.execSessionId)))).toBe('0\n0\n')
    await recorded(scope, id)
    await runner.crash()
    await startOwnRunner()
    const polled = value(
      await client.poll(scope, {
        execSessionId: id,
        yieldTimeMs: 0,
        maxOutputBytes: 64,
        since: OWN - 10,
      }),
    )
    expect(text(polled)).toBe(`${'a'.repeat(10)}\nown\n`)
    const chunk = value(
      await client.readSpool(scope, { execSessionId: id, offset: 0, length: 1 << 20 }),
    )
    expect(Buffer.from(chunk.bytes).toString('utf8')).toBe(`${'a'.repeat(OWN)}\nown\n`)
  })
})

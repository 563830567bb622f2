import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { value } from '../support/runner-results.ts'
import {
  connectCommand,
  curlCommand,
  descriptors,
  descriptorsLine,
  INHERITED,
  openHostFile,
  runnerWithClient,
  runToEnd,
  startListener,
} from '../support/sandbox-commands.ts'
import { tenantUid } from '../support/tenant-uid.ts'

/**
 * What a command inside the reference runner's bubblewrap sandbox can reach: the escapes of the
 * hardening issue, tried for real (real bwrap, real runner process).
 */
const secret = 'isolation-runner-secret-0123456789'
const planted = 'sk-planted-in-the-runner-environment'
/** Each tenant's commands run as a uid of its own (the runner runs as root in the tests). */
const sandboxUid = (tenant = 'acme') => tenantUid(root, tenant)
const repo = join(import.meta.dirname, '..', '..')
let root: string
let runner: RunnerProcess
let client: HttpSandboxRunner
/** A root-only host file the runner inherits, open read-write, as a job runner leaks one. */
const hostSecret = 'host-only-secret-behind-an-inherited-descriptor'
let host: ReturnType<typeof openHostFile>
let sessions = 0
const fresh = (tenant = 'acme'): SandboxScope => ({ tenant, sessionId: `iso-${++sessions}` })
const ws = (scope: SandboxScope, ...parts: string[]) =>
  join(root, scope.tenant, scope.sessionId, ...parts)

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnline-isolation-'))
  host = openHostFile(`${hostSecret}\n`)
  ;({ process: runner, client } = await runnerWithClient({
    root,
    secret,
    env: { OPENAI_API_KEY: planted, SOME_TOKEN: planted },
    inherit: { fd: host.fd, at: INHERITED },
  }))
})

afterAll(async () => {
  await runner?.stop()
  host?.remove()
  if (root) await rm(root, { recursive: true, force: true })
})

describe('a command in the sandbox', () => {
  it('the runner probed bubblewrap at start and says so', async () => {
    expect(runner.output()).toMatch(/"sandbox":\{"isolation":"bwrap"/)
    const health = (await (await fetch(`${runner.url}/healthz`)).json()) as unknown
    expect(health).toEqual({ ok: true, sandbox: 'bwrap' })
  })

  it('has only the allow-listed environment, and so have its parents (/proc/$PPID/environ)', async () => {
    const { output, exitCode } = await runToEnd(
      client,
      fresh(),
      "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; tr '\\0' '\\n' < /proc/1/environ",
    )
    expect(exitCode).toBe(0)
    expect(output).not.toContain(planted)
    expect(output).not.toContain(secret)
    expect(output).not.toMatch(/OPENAI_API_KEY|TURNLINE_|SOME_TOKEN/)
    const names = new Set(
      output
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => line.slice(0, line.indexOf('='))),
    )
    const allowed = ['PATH', 'HOME', 'PWD', 'TMPDIR', 'LANG', 'TERM', 'USER', 'LOGNAME', 'SHELL']
    for (const name of names)
      expect([...allowed, 'VTCODE_EXEC_SESSION_ID', 'OLDPWD']).toContain(name)
  })

  it('has no descriptor but stdio, not even one the runner inherited', async () => {
    const scope = fresh()
    const { exitCode } = await runToEnd(client, scope, descriptorsLine('report.txt'))
    expect(exitCode).toBe(0)
    expect(descriptors(await readFile(ws(scope, 'report.txt.fds'), 'utf8'))).toEqual([0, 1, 2])
    const report = await readFile(ws(scope, 'report.txt'), 'utf8')
    expect(report).toMatch(/Bad file descriptor/)
    expect(report).toMatch(/use=1\n$/)
    expect(report).not.toContain(hostSecret)
    expect(await readFile(host.path, 'utf8')).toBe(`${hostSecret}\n`)
  })

  it('unsandboxed too (TURNLINE_SANDBOX=off), a command gets no descriptor the runner inherited', async () => {
    const plain = await runnerWithClient({
      root: join(root, 'plain'),
      secret,
      env: { TURNLINE_SANDBOX: 'off' },
      inherit: { fd: host.fd, at: INHERITED },
    })
    try {
      const scope = fresh()
      await runToEnd(plain.client, scope, descriptorsLine('report.txt'))
      const workspace = join(root, 'plain', scope.tenant, scope.sessionId)
      const listing = await readFile(join(workspace, 'report.txt.fds'), 'utf8')
      expect(descriptors(listing)).toEqual([0, 1, 2])
      expect(await readFile(join(workspace, 'report.txt'), 'utf8')).not.toContain(hostSecret)
    } finally {
      await plain.process.stop()
    }
  })

  it('runs as an unprivileged user without capabilities', async () => {
    const { output } = await runToEnd(
      client,
      fresh(),
      'id -u; id -g; id -un; grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status',
    )
    const [uid, , name, ...caps] = output.trim().split('\n')
    expect(Number(uid)).toBe(await sandboxUid())
    expect(Number(uid)).not.toBe(0)
    expect(name).toBe('sandbox')
    expect(caps).toHaveLength(3)
    for (const line of caps) expect(line).toMatch(/:\s+0+$/)
  })

  it("cannot read or write another workspace, the runner's state or the server's files", async () => {
    const other = fresh('globex')
    value(await client.writeFile(other, { path: 'secret.txt', content: 'globex-private\n' }))
    const mine = fresh()
    const { output } = await runToEnd(
      client,
      mine,
      [
        `cat ${ws(other, 'secret.txt')}; echo "read=$?"`,
        `echo pwned > ${ws(other, 'pwned.txt')}; echo "write=$?"`,
        `echo "listing: $(ls ${root} | tr '\\n' ' ')"`,
        `ls ${join(root, '.runner-state')}; echo "state=$?"`,
        `ls ${repo}; echo "repo=$?"`,
        'touch /usr/pwned /etc/pwned /pwned; echo "system=$?"',
        'echo mine > mine.txt; echo "own=$?"',
      ].join('; '),
    )
    expect(output).not.toContain('globex-private')
    expect(output).toMatch(/read=1/)
    expect(output).toMatch(/write=[12]/)
    expect(output).toMatch(/state=2/)
    expect(output).toMatch(/repo=2/)
    expect(output).toMatch(/system=1/)
    expect(output).toMatch(/own=0/)
    // The only entry under the root is the way to this very workspace.
    expect(output).toMatch(/^listing: acme $/m)
    await expect(stat(ws(other, 'pwned.txt'))).rejects.toThrow()
    expect(await readFile(ws(mine, 'mine.txt'), 'utf8')).toBe('mine\n')
  })

  it('sees only its own processes', async () => {
    const { output } = await runToEnd(
      client,
      fresh(),
      [
        "for p in /proc/[0-9]*; do printf '%s ' $(basename $p); tr '\\0' ' ' < $p/cmdline; echo; done",
        `kill -0 ${process.pid}; echo "signal=$?"`,
      ].join('; '),
    )
    const processes = output.split('\n').filter((line) => /^\d+ /.test(line))
    expect(processes.length).toBeGreaterThan(0)
    expect(processes.length).toBeLessThanOrEqual(4)
    expect(processes[0]).toMatch(/^1 \S*bwrap /)
    expect(output).not.toMatch(/node|vitest|tsx|main\.ts/)
    expect(output).toMatch(/signal=1/)
  })

  it('has no network unless its session allows it, and then only through the egress proxy', async () => {
    const listener = await startListener()
    try {
      const scope = fresh()
      const closed = await runToEnd(
        client,
        scope,
        `env | grep -ci proxy; ${connectCommand(listener.port)}`,
      )
      expect(closed.output).toMatch(/^0\n/)
      expect(closed.output).not.toContain('CONNECTED')
      expect(closed.output).toMatch(/exit=1/)

      // Allowed the network: the host's loopback is still not there, directly or by proxy.
      const open = await runToEnd(
        client,
        scope,
        `echo "$HTTP_PROXY"; ${connectCommand(listener.port)}; ${curlCommand(`http://127.0.0.1:${listener.port}/`, "--noproxy ''")}`,
        { network: true },
      )
      expect(open.output).toMatch(/^http:\/\/127\.0\.0\.1:3128\n/)
      expect(open.output).not.toContain('CONNECTED')
      expect(open.output).toMatch(/refused: 127\.0\.0\.1 is a loopback address/)
      expect(listener.connections()).toBe(0)
    } finally {
      await listener.close()
    }
  })

  it("refuses names the system resolver maps to loopback: localhost and this machine's name", async () => {
    const listener = await startListener('::')
    try {
      for (const name of ['localhost', hostname()]) {
        const { output } = await runToEnd(
          client,
          fresh(),
          curlCommand(`http://${name}:${listener.port}/`, "--noproxy ''"),
          { network: true },
        )
        expect(output).toMatch(new RegExp(`refused: ${name} resolves to [0-9a-f.:]+, `))
        expect(output).toMatch(/status=403/)
      }
      expect(listener.connections()).toBe(0)
    } finally {
      await listener.close()
    }
  })

  it('the relay ends with the command: it keeps neither the sandbox nor the output open', async () => {
    const scope = fresh()
    const started = Date.now()
    const { exitCode } = await runToEnd(
      client,
      scope,
      // A background process outlives the command and looks for the relay afterwards.
      "(sleep 1; grep -c ' 0100007F:0C38 00000000:0000 0A ' /proc/net/tcp > r.tmp; mv r.tmp relay-after.txt) >/dev/null 2>&1 & echo started",
      { network: true },
    )
    expect(exitCode).toBe(0)
    let after: string | undefined
    while (after === undefined) {
      after = await readFile(ws(scope, 'relay-after.txt'), 'utf8').catch(() => undefined)
      if (after === undefined && Date.now() - started > 20_000)
        throw new Error('no relay-after.txt')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(after.trim()).toBe('0')
  })

  it('files the runner writes belong to the sandbox user, so commands can change them', async () => {
    const scope = fresh()
    value(await client.writeFile(scope, { path: 'deep/dir/notes.txt', content: 'one\n' }))
    const { output, exitCode } = await runToEnd(
      client,
      scope,
      'echo two >> deep/dir/notes.txt && touch deep/dir/more && cat deep/dir/notes.txt',
    )
    expect(exitCode, output).toBe(0)
    expect(output).toBe('one\ntwo\n')
    expect((await stat(ws(scope, 'deep/dir/notes.txt'))).uid).toBe(await sandboxUid())
    expect((await stat(ws(scope, 'deep'))).uid).toBe(await sandboxUid())
  })

  it("git for worktrees runs sandboxed too: the repository's hooks are the tenant's code", async () => {
    const scope = fresh()
    const hook = [
      '#!/bin/sh',
      'id -u > "$HOME/hook-uid.txt"',
      'tr "\\0" "\\n" < /proc/$PPID/environ > "$HOME/hook-env.txt" 2>&1',
      'ls /proc | grep -cE "^[0-9]+$" > "$HOME/hook-procs.txt"',
      descriptorsLine('"$HOME/hook-fds.txt"'),
    ].join('\n')
    const setup = await runToEnd(
      client,
      scope,
      [
        'git init -q',
        'git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m init',
        `printf '%s\\n' '${hook.replaceAll("'", "'\\''")}' > .git/hooks/post-checkout`,
        'chmod +x .git/hooks/post-checkout',
      ].join(' && '),
    )
    expect(setup.exitCode, setup.output).toBe(0)
    const made = value(await client.createWorktree(scope, { name: 'child' }))
    expect(made).toMatchObject({ path: '.vtcode/worktrees/child', created: true })
    expect(Number(await readFile(ws(scope, 'hook-uid.txt'), 'utf8'))).toBe(await sandboxUid())
    const env = await readFile(ws(scope, 'hook-env.txt'), 'utf8')
    expect(env).not.toContain(planted)
    expect(env).not.toContain(secret)
    expect(Number(await readFile(ws(scope, 'hook-procs.txt'), 'utf8'))).toBeLessThanOrEqual(8)
    expect(descriptors(await readFile(ws(scope, 'hook-fds.txt.fds'), 'utf8'))).toEqual([0, 1, 2])
    const fds = await readFile(ws(scope, 'hook-fds.txt'), 'utf8')
    expect(fds).not.toContain(hostSecret)
    expect(fds).toMatch(/use=1\n$/)
    // The worktree is usable from a later command.
    const status = await runToEnd(
      client,
      scope,
      'git -C .vtcode/worktrees/child status --short; echo ok',
    )
    expect(status.output).toContain('ok')
    expect(status.exitCode).toBe(0)
  })
})

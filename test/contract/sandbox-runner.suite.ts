import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunnerResult, SandboxRunner, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import type { startCallbackReceiver } from '../support/callback-receiver.ts'

export interface RunnerUnderTest {
  runner: SandboxRunner
  /** The runner's root folder (workspaces are `<root>/<tenant>/<session>`). */
  root: string
  receiver?: Awaited<ReturnType<typeof startCallbackReceiver>>
}

function value<T>(result: RunnerResult<T>): T {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`)
  return result.value
}

function refusal<T>(result: RunnerResult<T>) {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`)
  return result.refusal
}

let counter = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `suite-${++counter}` })

/** What every SandboxRunner must do, whatever carries it. */
export function sandboxRunnerSuite(name: string, make: () => RunnerUnderTest) {
  describe(`SandboxRunner: ${name}`, () => {
    let t: RunnerUnderTest
    beforeAll(() => {
      t = make()
    })
    const ws = (scope: SandboxScope, ...parts: string[]) =>
      join(t.root, scope.tenant, scope.sessionId, ...parts)
    const start = (scope: SandboxScope, cmd: string, extra: Record<string, unknown> = {}) =>
      t.runner.start(scope, {
        requestId: `req_${scope.sessionId}_${++counter}`,
        toolCallId: 'call_0',
        cmd,
        tty: false,
        yieldTimeMs: 200,
        maxOutputBytes: 4096,
        ...extra,
      })

    it('a command outlives a short wait; a later wait returns its exit code and output', async () => {
      const scope = fresh()
      const started = value(await start(scope, 'echo started; sleep 1.5; echo finished; exit 7'))
      expect(started.execSessionId).toMatch(/^run-[a-z0-9]+$/)
      expect(started).toMatchObject({ attached: false, backend: 'pipe', workdir: '.' })
      expect(started.state.status).toBe('running')
      expect(started.output.head).toBe('started\n')
      expect(started.spool.path).toBe(
        `.vtcode/context/tool_outputs/write_stdin_${started.execSessionId}.txt`,
      )
      const id = started.execSessionId
      const short = value(
        await t.runner.wait(scope, { execSessionId: id, timeoutMs: 300, maxOutputBytes: 4096 }),
      )
      expect(short.state.status).toBe('running')
      expect(short.wait?.timedOut).toBe(true)
      const done = value(
        await t.runner.wait(scope, { execSessionId: id, timeoutMs: 10_000, maxOutputBytes: 4096 }),
      )
      expect(done.state).toEqual({ status: 'exited', exitCode: 7 })
      expect(done.output.head).toBe('finished\n')
      expect(done.totalOutputBytes).toBe(17)
      expect(done.wait?.timedOut).toBe(false)
      expect(await readFile(ws(scope, done.spool.path), 'utf8')).toBe('started\nfinished\n')

      if (t.receiver) {
        const hit = await t.receiver.accepted(id)
        expect(hit.hmacValid).toBe(true)
        expect(hit.callback).toMatchObject({
          type: 'exec.exited',
          tenant: scope.tenant,
          session_id: scope.sessionId,
          exec_session_id: id,
          request_id: started.requestId,
          tool_call_id: 'call_0',
          exit_code: 7,
          total_output_bytes: 17,
          spool_path: started.spool.path,
          spool_complete: true,
          attempt: 2,
        })
        const attempts = t.receiver.received.filter((r) => r.callback?.exec_session_id === id)
        expect(attempts.map((r) => r.status)).toEqual([503, 204])
      }
    })

    it('writes to stdin; a trailing Ctrl-D closes it; a closed stdin refuses input', async () => {
      const scope = fresh()
      const cmd = 'while read line; do echo "got:$line"; done; echo eof'
      const id = value(await start(scope, cmd, { yieldTimeMs: 100 })).execSessionId
      const first = value(
        await t.runner.write(scope, {
          execSessionId: id,
          chars: 'a\nb\n',
          yieldTimeMs: 300,
          maxOutputBytes: 4096,
        }),
      )
      expect(first.output.head).toBe('got:a\ngot:b\n')
      expect(first.state.status).toBe('running')
      const closed = value(
        await t.runner.write(scope, {
          execSessionId: id,
          chars: 'c\n\u0004',
          yieldTimeMs: 2000,
          maxOutputBytes: 4096,
        }),
      )
      expect(closed.output.head).toBe('got:c\neof\n')
      expect(closed.state).toEqual({ status: 'exited', exitCode: 0 })
      const late = await t.runner.write(scope, {
        execSessionId: id,
        chars: 'x\n',
        yieldTimeMs: 0,
        maxOutputBytes: 64,
      })
      expect(refusal(late).code).toBe('conflict')
    })

    it('runs in a pseudo-terminal when asked', async () => {
      const scope = fresh()
      const started = value(
        await start(scope, 'test -t 0 && echo tty; read x; echo "x=$x"', { tty: true }),
      )
      expect(started.backend).toBe('pty')
      const done = value(
        await t.runner.write(scope, {
          execSessionId: started.execSessionId,
          chars: 'hi\n',
          yieldTimeMs: 3000,
          maxOutputBytes: 4096,
        }),
      )
      expect(`${started.output.head}${done.output.head}`.replace(/\r/g, '')).toContain(
        'tty\nhi\nx=hi\n',
      )
      expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
    })

    it('a start retried with the same request id re-attaches; the command ran once', async () => {
      const scope = fresh()
      const request = {
        requestId: `req_once_${counter}`,
        toolCallId: 'call_once',
        cmd: 'echo run >> ran.txt; sleep 0.5',
        tty: false,
        yieldTimeMs: 50,
        maxOutputBytes: 1024,
      }
      const [a, b] = await Promise.all([
        t.runner.start(scope, request),
        t.runner.start(scope, request),
      ])
      const c = await t.runner.start(scope, request)
      const ids = [value(a), value(b), value(c)].map((s) => s.execSessionId)
      expect(new Set(ids).size).toBe(1)
      expect([value(a).attached, value(b).attached].sort()).toEqual([false, true])
      expect(value(c).attached).toBe(true)
      value(
        await t.runner.wait(scope, { execSessionId: ids[0]!, timeoutMs: 5000, maxOutputBytes: 64 }),
      )
      expect(await readFile(ws(scope, 'ran.txt'), 'utf8')).toBe('run\n')
      const other = await t.runner.start(scope, { ...request, cmd: 'echo something else' })
      expect(refusal(other).code).toBe('conflict')
    })

    it('an unknown exec session is a not_found refusal', async () => {
      const result = await t.runner.poll(fresh(), {
        execSessionId: 'run-000000000000',
        yieldTimeMs: 0,
        maxOutputBytes: 64,
      })
      expect(refusal(result).code).toBe('not_found')
    })

    it('close ends the command and its whole process group', async () => {
      const scope = fresh()
      const id = value(
        await start(scope, 'sleep 30 & echo $! > bg.pid; wait', { yieldTimeMs: 300 }),
      ).execSessionId
      const began = Date.now()
      const closed = value(await t.runner.close(scope, id))
      expect(Date.now() - began).toBeLessThan(3000)
      expect(closed.state).toEqual({ status: 'exited', exitCode: 143 })
      const pid = Number(await readFile(ws(scope, 'bg.pid'), 'utf8'))
      expect(pid).toBeGreaterThan(1)
      // Gone, or a zombie waiting for its new parent to reap it: either way no longer running.
      const state = await readFile(`/proc/${pid}/stat`, 'utf8').then(
        (text) => text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3),
        () => 'gone',
      )
      expect(['gone', 'Z', 'X']).toContain(state)
    })

    describe('confinement to the workspace', () => {
      let outside: string
      beforeAll(async () => {
        outside = await mkdtemp(join(tmpdir(), 'turnline-outside-'))
        await writeFile(join(outside, 'secret.txt'), 'top secret\n')
      })
      afterAll(() => rm(outside, { recursive: true, force: true }))

      it('refuses "..", absolute paths and symlinks leading out, and runs or writes nothing', async () => {
        const scope = fresh()
        value(await t.runner.writeFile(scope, { path: 'keep.txt', content: 'k\n' }))
        await symlink(outside, ws(scope, 'link'))
        await symlink(join(outside, 'secret.txt'), ws(scope, 'secret-link'))
        await symlink(join(outside, 'absent.txt'), ws(scope, 'dangling'))
        await mkdir(ws(scope, 'sub'))

        const escapes: Array<[string, Promise<RunnerResult<unknown>>]> = [
          ['workdir ..', start(scope, 'touch ran-up', { workdir: '../' })],
          ['workdir sub/../..', start(scope, 'touch ran-up2', { workdir: 'sub/../..' })],
          ['workdir absolute', start(scope, 'touch ran-abs', { workdir: outside })],
          ['workdir symlink', start(scope, 'touch ran-link', { workdir: 'link' })],
          ['write ..', t.runner.writeFile(scope, { path: '../evil.txt', content: 'x' })],
          [
            'write absolute',
            t.runner.writeFile(scope, { path: join(outside, 'evil.txt'), content: 'x' }),
          ],
          [
            'write via dir link',
            t.runner.writeFile(scope, { path: 'link/evil.txt', content: 'x' }),
          ],
          ['write via file link', t.runner.writeFile(scope, { path: 'secret-link', content: 'x' })],
          [
            'write via dangling link',
            t.runner.writeFile(scope, { path: 'dangling', content: 'x' }),
          ],
          ['read via file link', t.runner.readFile(scope, { path: 'secret-link' })],
          ['read via dir link', t.runner.readFile(scope, { path: 'link/secret.txt' })],
          ['read ..', t.runner.readFile(scope, { path: '../../../etc/passwd' })],
          [
            'patch via link',
            t.runner.applyPatch(
              scope,
              '*** Begin Patch\n*** Add File: link/p.txt\n+x\n*** End Patch',
            ),
          ],
          [
            'patch delete via link',
            t.runner.applyPatch(
              scope,
              '*** Begin Patch\n*** Delete File: link/secret.txt\n*** End Patch',
            ),
          ],
        ]
        for (const [label, pending] of escapes) {
          const r = refusal(await pending)
          expect(`${label}: ${r.code}`).toBe(`${label}: path_escape`)
          expect(r.message).toMatch(/workspace|symlink/)
        }
        expect((await readdir(outside)).sort()).toEqual(['secret.txt'])
        expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n')
        const here = await readdir(ws(scope))
        expect(here.filter((f) => f.startsWith('ran-'))).toEqual([])
        expect(
          (await readdir(join(t.root, scope.tenant))).filter((f) => f.startsWith('ran-')),
        ).toEqual([])
        expect(
          (await readdir(t.root)).filter((f) => f.startsWith('ran-') || f === 'evil.txt'),
        ).toEqual([])
      })
    })

    it('reads and writes files, and applies patches all or nothing', async () => {
      const scope = fresh()
      expect(
        value(await t.runner.writeFile(scope, { path: 'dir/a.txt', content: '1\n2\n3\n4\n' })),
      ).toEqual({
        path: 'dir/a.txt',
        kind: 'add',
        bytes: 8,
      })
      expect(
        value(
          await t.runner.writeFile(scope, { path: './dir//a.txt', content: 'one\ntwo\nthree\n' }),
        ).kind,
      ).toBe('update')
      expect(
        value(await t.runner.readFile(scope, { path: 'dir/a.txt', startLine: 2, maxLines: 1 })),
      ).toEqual({
        path: 'dir/a.txt',
        content: 'two\n',
        size: 14,
        startLine: 2,
        endLine: 2,
        totalLines: 3,
        truncated: true,
      })
      expect(refusal(await t.runner.readFile(scope, { path: 'nope.txt' })).code).toBe('not_found')

      const applied = value(
        await t.runner.applyPatch(
          scope,
          [
            '*** Begin Patch',
            '*** Add File: new/b.txt',
            '+hello',
            '*** Update File: dir/a.txt',
            '@@',
            ' one',
            '-two',
            '+TWO',
            '*** End Patch',
          ].join('\n'),
        ),
      )
      expect(applied.changes).toEqual([
        { path: 'new/b.txt', kind: 'add' },
        { path: 'dir/a.txt', kind: 'update' },
      ])
      expect(await readFile(ws(scope, 'dir/a.txt'), 'utf8')).toBe('one\nTWO\nthree\n')
      expect(await readFile(ws(scope, 'new/b.txt'), 'utf8')).toBe('hello\n')

      const deleted = value(
        await t.runner.applyPatch(
          scope,
          '*** Begin Patch\n*** Delete File: new/b.txt\n*** End Patch',
        ),
      )
      expect(deleted.changes).toEqual([{ path: 'new/b.txt', kind: 'delete' }])
      expect(await readdir(ws(scope, 'new'))).toEqual([])

      const malformed = refusal(
        await t.runner.applyPatch(
          scope,
          '*** Begin Patch\n*** Update File: dir/a.txt\n~ nonsense\n*** End Patch',
        ),
      )
      expect(malformed.code).toBe('invalid_input')
      expect(malformed.message).toContain('line 3')

      const mismatch = refusal(
        await t.runner.applyPatch(
          scope,
          '*** Begin Patch\n*** Add File: c.txt\n+c\n*** Update File: dir/a.txt\n@@\n-absent\n+x\n*** End Patch',
        ),
      )
      expect(mismatch.code).toBe('patch_failed')
      expect(mismatch.message).toContain('absent')
      expect(await readdir(ws(scope))).not.toContain('c.txt')
      expect(await readFile(ws(scope, 'dir/a.txt'), 'utf8')).toBe('one\nTWO\nthree\n')
    })

    it('creates a git worktree for isolation, and says clearly when it cannot', async () => {
      const plain = fresh()
      value(await t.runner.writeFile(plain, { path: 'README.md', content: '# x\n' }))
      const refused = refusal(await t.runner.createWorktree(plain, { name: 'child' }))
      expect(refused.code).toBe('invalid_input')
      expect(refused.message).toContain('git repository')

      const repo = fresh()
      value(await t.runner.writeFile(repo, { path: 'README.md', content: '# repo\n' }))
      const init = value(
        await start(
          repo,
          'git init -q && git add -A && git -c user.email=t@example.com -c user.name=t commit -qm init',
          {
            yieldTimeMs: 10_000,
          },
        ),
      )
      expect(init.state).toEqual({ status: 'exited', exitCode: 0 })
      const tree = value(await t.runner.createWorktree(repo, { name: 'child' }))
      expect(tree).toEqual({
        path: '.vtcode/worktrees/child',
        branch: 'vtcode/child',
        created: true,
      })
      expect(await readFile(ws(repo, '.vtcode/worktrees/child/README.md'), 'utf8')).toBe('# repo\n')
      expect(value(await t.runner.createWorktree(repo, { name: 'child' })).created).toBe(false)
      const inTree = value(
        await start(repo, 'git rev-parse --abbrev-ref HEAD', {
          workdir: '.vtcode/worktrees/child',
          yieldTimeMs: 5000,
        }),
      )
      expect(inTree.output.head).toBe('vtcode/child\n')
    })
  })
}

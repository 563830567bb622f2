import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunnerResult, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { refusal, value } from '../support/runner-results.ts'
import type { RunnerUnderTest } from './sandbox-runner.suite.ts'

let counter = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `files-${++counter}` })

/** Files, patches, worktrees and confinement: what every SandboxRunner must do. */
export function sandboxRunnerFilesSuite(name: string, make: () => RunnerUnderTest) {
  describe(`SandboxRunner files: ${name}`, () => {
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

    it('follows symlinks that stay inside the workspace, and refuses one that climbs out', async () => {
      const scope = fresh()
      value(await t.runner.writeFile(scope, { path: 'real/notes.txt', content: 'one\n' }))
      await mkdir(ws(scope, 'sub'))
      await symlink('real', ws(scope, 'dir-link'))
      await symlink('notes.txt', ws(scope, 'real/file-link'))
      await symlink('..', ws(scope, 'sub/up'))
      await symlink('../..', ws(scope, 'sub/out'))
      await symlink(ws(scope, 'real'), ws(scope, 'absolute-link'))

      for (const path of ['dir-link/notes.txt', 'real/file-link', 'sub/up/real/notes.txt']) {
        expect(value(await t.runner.readFile(scope, { path })).content, path).toBe('one\n')
      }
      value(await t.runner.writeFile(scope, { path: 'absolute-link/notes.txt', content: 'two\n' }))
      value(await t.runner.writeFile(scope, { path: 'dir-link/new/deep.txt', content: 'deep\n' }))
      expect(await readFile(ws(scope, 'real/notes.txt'), 'utf8')).toBe('two\n')
      expect(await readFile(ws(scope, 'real/new/deep.txt'), 'utf8')).toBe('deep\n')
      // The start answers once the command has exited: its whole output, however slow the spawn.
      const here = value(
        await start(scope, 'pwd -P', { workdir: 'sub/up/dir-link', yieldTimeMs: 5000 }),
      )
      expect(here.state).toEqual({ status: 'exited', exitCode: 0 })
      expect(here.output.head).toBe(`${ws(scope, 'real')}\n`)

      const deep = `${Array.from({ length: 100 }, () => 'n').join('/')}/deep.txt`
      expect(value(await t.runner.writeFile(scope, { path: deep, content: 'x' })).kind).toBe('add')
      const tooDeep = `${Array.from({ length: 300 }, () => 'n').join('/')}/deep.txt`
      expect(refusal(await t.runner.writeFile(scope, { path: tooDeep, content: 'x' })).code).toBe(
        'invalid_input',
      )

      const out = refusal(await t.runner.readFile(scope, { path: 'sub/out/x.txt' }))
      expect(out.code).toBe('path_escape')
      expect(out.message).toMatch(/outside the workspace/)
    })

    it('keeps the permissions of a file it rewrites', async () => {
      const scope = fresh()
      const made = value(
        await start(scope, "printf '#!/bin/sh\\necho one\\n' > run.sh && chmod 750 run.sh", {
          yieldTimeMs: 5000,
        }),
      )
      expect(made.state).toEqual({ status: 'exited', exitCode: 0 })
      value(
        await t.runner.applyPatch(
          scope,
          '*** Begin Patch\n*** Update File: run.sh\n@@\n-echo one\n+echo two\n*** End Patch',
        ),
      )
      const ran = value(await start(scope, './run.sh', { yieldTimeMs: 5000 }))
      expect(ran.output.head).toBe('two\n')
      expect((await stat(ws(scope, 'run.sh'))).mode & 0o777).toBe(0o750)
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

import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { GIT_LOG_COMMAND } from '../../src/core/orientation/workspace-git.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'
import { value } from '../support/runner-results.ts'

/**
 * The runner reads a workspace's recent commits from its `.git` without a process, exactly as
 * `git log --oneline -5 --no-decorate` prints them (checked against git itself, run in the
 * same sandbox), and never through a symlink: a `.git` that leads anywhere else is 'unknown',
 * and the caller asks git in the sandbox.
 */
const fixture = useRunnerProcess('git-log-runner')

let n = 0
const newScope = (): SandboxScope => ({ tenant: 'acme', sessionId: `git-log-${n++}` })
const workspace = (scope: SandboxScope) => join(fixture.root, scope.tenant, scope.sessionId)

async function run(scope: SandboxScope, cmd: string): Promise<string> {
  const snap = value(
    await fixture.client.start(scope, {
      requestId: `req_${scope.sessionId}_${cmd.length}_${Date.now()}`,
      toolCallId: 'call_git',
      cmd,
      tty: false,
      yieldTimeMs: 30_000,
      maxOutputBytes: 64 * 1024,
    }),
  )
  expect(snap.state).toMatchObject({ status: 'exited' })
  return `${snap.output.head}${snap.output.tail}`
}

const commit = (message: string, date: number) =>
  `GIT_COMMITTER_DATE="${date} +0000" GIT_AUTHOR_DATE="${date} +0000" ` +
  `git -c user.email=t@t -c user.name=t commit -q --allow-empty -m ${JSON.stringify(message)}`

const recent = async (scope: SandboxScope) =>
  value(await fixture.client.recentCommits(scope, { count: 5 }))

describe('the recent git log read without a process', () => {
  it('finds no repository in a workspace without .git, nor commits on an unborn branch', async () => {
    const scope = newScope()
    expect(await recent(scope)).toEqual({ state: 'none' })
    await run(scope, 'git init -q')
    expect(await recent(scope)).toEqual({ state: 'none' })
  })

  it('prints what git prints: dates order merges, subjects fold, loose and packed alike', async () => {
    const scope = newScope()
    await run(
      scope,
      [
        'git init -q -b main',
        commit('first', 1_700_000_000),
        commit('second\nwrapped title\n\nbody text', 1_700_000_100),
        'git checkout -q -b side',
        commit('on the side', 1_700_000_300),
        commit('side again', 1_700_000_500),
        'git checkout -q main',
        commit('\n\n  main after  \n', 1_700_000_400),
        `GIT_COMMITTER_DATE="1700000600 +0000" git -c user.email=t@t -c user.name=t merge -q --no-ff side -m "merge side"`,
        commit('top', 1_700_000_700),
      ].join(' && '),
    )
    const git = (await run(scope, GIT_LOG_COMMAND)).trim()
    expect(git.split('\n')).toHaveLength(5)
    expect(await recent(scope)).toEqual({ state: 'log', log: git })
    await run(scope, 'git gc -q && test -z "$(find .git/objects -type f -path "*/objects/??/*")"')
    expect(await recent(scope)).toEqual({ state: 'log', log: git })
    await run(scope, 'git checkout -q --detach HEAD~2')
    expect(await recent(scope)).toEqual({
      state: 'log',
      log: (await run(scope, GIT_LOG_COMMAND)).trim(),
    })
  })

  it('leaves to git what it does not follow (config that changes the output)', async () => {
    const scope = newScope()
    await run(scope, `git init -q && ${commit('one', 1_700_000_000)} && git config core.abbrev 12`)
    expect(await recent(scope)).toMatchObject({ state: 'unknown' })
  })

  it('never reads through a symlink: a .git leading out of the workspace is unknown', async () => {
    const other = newScope()
    await run(other, `git init -q && ${commit('secret of another session', 1_700_000_000)}`)
    const scope = newScope()
    await run(scope, 'true')
    await symlink(join(workspace(other), '.git'), join(workspace(scope), '.git'))
    expect(await recent(scope)).toMatchObject({ state: 'unknown' })

    const inner = newScope()
    await run(inner, `git init -q && ${commit('mine', 1_700_000_000)}`)
    const objects = join(workspace(inner), '.git/objects')
    await run(inner, 'mv .git/objects .git/objects-real')
    await symlink(join(workspace(other), '.git/objects'), objects)
    expect(await recent(inner)).toMatchObject({ state: 'unknown' })

    const head = newScope()
    await run(head, 'git init -q')
    await mkdir(join(workspace(head), 'x'))
    await writeFile(join(workspace(head), 'x/HEAD'), 'ref: refs/heads/master\n')
    await run(head, 'rm .git/HEAD')
    await symlink(join(workspace(other), '.git/HEAD'), join(workspace(head), '.git/HEAD'))
    const read = await recent(head)
    expect(read).toMatchObject({ state: 'unknown' })
    expect(JSON.stringify(read)).not.toContain('secret of another session')
  })
})

import { randomBytes } from 'node:crypto'
import { link, mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { GIT_LOG_COMMAND } from '../../src/core/orientation/workspace-git.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import {
  entryHeader,
  HEADER,
  looseCommit,
  packIndex,
  packSearches,
} from '../support/git-read-worst.ts'
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

/** With HEAD on `head`, the reading is unknown and the runner's peak memory grows < 512 MiB. */
async function unknownInBoundedMemory(scope: SandboxScope, head: string): Promise<void> {
  const git = join(workspace(scope), '.git')
  await writeFile(join(git, 'refs/heads/master'), `${head}\n`)
  await writeFile(join(git, 'HEAD'), 'ref: refs/heads/master\n')
  const before = fixture.runner.peakMemoryBytes()
  expect(await recent(scope)).toMatchObject({ state: 'unknown' })
  expect(fixture.runner.peakMemoryBytes() - before).toBeLessThan(512 * 1024 * 1024)
}

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

  it('gives up past a bound on what it loads: a commit with many huge parents is unknown', async () => {
    // A tenant's .git can hold objects that inflate a thousandfold, and one commit can name
    // tens of thousands of parents (git reads what a name holds, so one file hard-linked under
    // every name costs its few kilobytes once): read in full, the walk would hold gigabytes.
    const scope = newScope()
    await run(scope, 'git init -q')
    const git = join(workspace(scope), '.git')
    const parents = Array.from({ length: 400 }, () => randomBytes(20).toString('hex'))
    const huge = await looseCommit(git, parents[0] as string, `${HEADER}${'x'.repeat(1_000_000)}\n`)
    for (const sha of parents.slice(1)) {
      await mkdir(join(git, 'objects', sha.slice(0, 2)), { recursive: true })
      await link(huge, join(git, 'objects', sha.slice(0, 2), sha.slice(2)))
    }
    const head = 'f'.repeat(40)
    await looseCommit(git, head, `${parents.map((p) => `parent ${p}\n`).join('')}${HEADER}top\n`)
    // Read in full: 400 subjects of 1 MB each, 400 MB.
    await unknownInBoundedMemory(scope, head)
  })

  it('never makes an object larger than a commit may be from a small delta in a pack', async () => {
    // A pack entry's delta names the size it makes and copies 64 KiB of its base per byte: 16 KiB
    // of delta would make 1 GiB, before the object is seen not to be a commit.
    const scope = newScope()
    await run(scope, 'git init -q')
    const git = join(workspace(scope), '.git')
    const varint = (value: number) => {
      const bytes: number[] = []
      for (let rest = value; ; rest = Math.floor(rest / 128)) {
        bytes.push((rest & 0x7f) | (rest >= 128 ? 0x80 : 0))
        if (rest < 128) return Buffer.from(bytes)
      }
    }
    const base = Buffer.alloc(0x10000)
    const copies = 16 * 1024
    const delta = Buffer.concat([
      varint(base.length),
      varint(copies * 0x10000),
      Buffer.alloc(copies, 0x80), // each: copy 0x10000 bytes from the base's start
    ])
    const baseEntry = Buffer.concat([entryHeader(3, base.length), deflateSync(base)])
    const deltaAt = 12 + baseEntry.length
    expect(deltaAt - 12).toBeLessThan(128) // the entry's offset back to its base, in one byte
    const pack = Buffer.concat([
      Buffer.from('PACK\0\0\0\x02\0\0\0\x02', 'latin1'),
      baseEntry,
      entryHeader(6, delta.length),
      Buffer.from([deltaAt - 12]),
      deflateSync(delta),
      Buffer.alloc(20),
    ])
    const head = 'f'.repeat(40)
    await writeFile(join(git, 'objects/pack/pack-bomb.pack'), pack)
    await writeFile(
      join(git, 'objects/pack/pack-bomb.idx'),
      packIndex([{ sha: head, offset: deltaAt }]),
    )
    await unknownInBoundedMemory(scope, head)
  })

  it('lists no object folder past a bound on names: one of millions is never read whole', async () => {
    // Names cost a tenant a directory entry each (hard links: no file of their own), while the
    // runner would hold every one of them at once: 10 002 here, the bound 10 000.
    const scope = newScope()
    await run(scope, `git init -q && ${commit('one', 1_700_000_000)}`)
    const pack = join(workspace(scope), '.git/objects/pack')
    await writeFile(join(pack, 'n'), '')
    await Promise.all(
      Array.from({ length: 10_001 }, (_, i) => link(join(pack, 'n'), join(pack, `n${i}`))),
    )
    expect(await recent(scope)).toMatchObject({ state: 'unknown' })
  })

  it('takes a pack index that lists an object twice for none git wrote', async () => {
    // Checking a commit's abbreviation walked the index from its prefix while entries equalled
    // the commit: 2 million copies of it and one entry sharing 39 digits held the runner's one
    // thread 25 s, once per length tried. A sorted index of unique objects needs two entries.
    const scope = newScope()
    await run(scope, 'git init -q')
    const git = join(workspace(scope), '.git')
    const head = `ab${'0'.repeat(37)}1`
    await looseCommit(git, head, `${HEADER}top\n`)
    const near = `ab${'0'.repeat(37)}2`
    const entries = [head, head, near].map((sha) => ({ sha, offset: 0 }))
    await writeFile(join(git, 'objects/pack/pack-twice.idx'), packIndex(entries))
    await writeFile(join(git, 'HEAD'), `${head}\n`)
    expect(await recent(scope)).toMatchObject({ state: 'unknown' })
  })

  it('takes a pack index shorter than the objects it claims for none git wrote', async () => {
    // 1 KiB claiming 4 billion objects: the binary search for an abbreviation, its bounds' sum
    // past 2^32, went round forever on the runner's one thread.
    const scope = newScope()
    await run(scope, `git init -q && ${commit('one', 1_700_000_000)}`)
    const claims = Buffer.concat([packIndex([]).subarray(0, 8), Buffer.alloc(1024, 0xff)])
    await writeFile(join(workspace(scope), '.git/objects/pack/pack-claims.idx'), claims)
    expect(await recent(scope)).toMatchObject({ state: 'unknown' })
  })

  it('searches pack indexes within a bound: every object looked up searches every index', async () => {
    // 300 indexes of 1000 objects (10 steps a search) and a commit of 400 parents in another
    // pack: 1.2 million steps on the runner's one thread (a 5-commit walk over 50 packs takes
    // some 40 000); 4000 such indexes held it over 30 s.
    const scope = newScope()
    await run(scope, 'git init -q')
    const git = join(workspace(scope), '.git')
    await packSearches(git, 400)
    expect(await recent(scope)).toMatchObject({ state: 'unknown' })
  })
})

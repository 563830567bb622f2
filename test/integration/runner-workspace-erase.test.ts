import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, link, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { processesWith } from '../support/proc-tree.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'
import { startRunnerProcess } from '../support/runner-process.ts'
import { until } from '../support/until.ts'

/**
 * `POST /v1/workspace/erase` on the reference runner, a real process with bubblewrap: a
 * workspace a tenant's commands filled with symlinks to the host, a deep tree, a FIFO and an
 * unreadable folder goes whole, links removed as links (their targets stay); other workspaces
 * stay; commands running there end; erasing again is `absent`; what an erase cut short by a
 * crash left is removed by the next one.
 */
const fixture = useRunnerProcess('erase')
let outside = ''

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'turnline-erase-outside-'))
  await mkdir(join(outside, 'dir'))
  await writeFile(join(outside, 'keep.txt'), 'host file')
  await writeFile(join(outside, 'dir', 'inner.txt'), 'host folder file')
})
afterAll(async () => {
  if (outside) await rm(outside, { recursive: true, force: true })
})

/** Everything under the host folder the links point to, as it must stay. */
const HOST_FILES = ['dir', 'dir/inner.txt', 'keep.txt']
async function hostFiles(): Promise<string[]> {
  return (await readdir(outside, { recursive: true })).sort()
}

async function run(client: HttpSandboxRunner, scope: SandboxScope, cmd: string) {
  const started = await client.start(scope, {
    requestId: `req_${randomBytes(8).toString('hex')}`,
    toolCallId: 'call_erase',
    cmd,
    tty: false,
    yieldTimeMs: 0,
    maxOutputBytes: 4096,
  })
  if (!started.ok) throw new Error(started.refusal.message)
  const waited = await client.wait(scope, {
    execSessionId: started.value.execSessionId,
    timeoutMs: 60_000,
    maxOutputBytes: 4096,
  })
  if (!waited.ok) throw new Error(waited.refusal.message)
  const { state, output } = waited.value
  expect({ state, output: output.head }).toMatchObject({ state: { exitCode: 0 } })
}

/** What a tenant's command leaves to trip a careless delete. */
const plantTraps = (host: string) =>
  [
    'set -e',
    `ln -s ${host} out-dir`,
    `ln -s ${host}/keep.txt out-file`,
    `ln -s ${host}/dir/inner.txt out-inner`,
    'mkdir -p a/b && ln -s ../../.. a/b/up && ln -s / a/root',
    `mkdir locked && touch locked/f && ln -s ${host} locked/out && chmod 000 locked`,
    'mkfifo pipe',
    // 150 folders deep (beyond what the eraser holds open at once), a link at the bottom.
    `for i in $(seq 150); do mkdir d; cd d; done; ln -s ${host} bottom; echo deep > f`,
  ].join('\n')

describe('POST /v1/workspace/erase', { timeout: 120_000 }, () => {
  it('erases the workspace without following its symlinks; others stay; commands end', async () => {
    const { client, root } = fixture
    const mine = { tenant: 'alpha', sessionId: 's1' }
    const sibling = { tenant: 'alpha', sessionId: 's2' }
    const otherTenant = { tenant: 'beta', sessionId: 's1' }
    await run(client, sibling, 'echo sibling > kept.txt')
    await run(client, otherTenant, `echo other > kept.txt && ln -s ${outside} out`)
    const marker = String(7000 + Math.floor(Math.random() * 999))
    const sleeping = await client.start(mine, {
      requestId: `req_${randomBytes(8).toString('hex')}`,
      toolCallId: 'call_sleep',
      cmd: `exec sleep ${marker}`,
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 64,
    })
    if (!sleeping.ok) throw new Error(sleeping.refusal.message)
    await until('the command runs', () =>
      processesWith(`sleep ${marker}`).length > 0 ? true : undefined,
    )
    // Last: its unreadable folder makes the tenant's disk use unknown, which refuses commands.
    await run(client, mine, plantTraps(outside))
    expect(existsSync(join(root, '.runner-state', 'alpha', 's1'))).toBe(true)

    expect(await client.eraseWorkspace(mine)).toEqual({ ok: true, value: { state: 'erased' } })
    expect(await client.eraseWorkspace(mine)).toEqual({ ok: true, value: { state: 'absent' } })

    expect(await readdir(join(root, 'alpha'))).toEqual(['s2'])
    expect(existsSync(join(root, '.runner-state', 'alpha', 's1'))).toBe(false)
    expect(await hostFiles()).toEqual(HOST_FILES)
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('host file')
    expect(readFileSync(join(root, 'alpha', 's2', 'kept.txt'), 'utf8')).toBe('sibling\n')
    expect(readFileSync(join(root, 'beta', 's1', 'kept.txt'), 'utf8')).toBe('other\n')
    expect(processesWith(`sleep ${marker}`)).toEqual([])
    const poll = await client.poll(mine, {
      execSessionId: sleeping.value.execSessionId,
      yieldTimeMs: 0,
      maxOutputBytes: 64,
    })
    expect(poll).toMatchObject({ ok: false, refusal: { code: 'not_found' } })

    // The next request (that poll) made an empty workspace: nothing of the old one is in it.
    const read = await client.readFile(mine, { path: 'out-file' })
    expect(read).toMatchObject({ ok: false, refusal: { code: 'not_found' } })
    // (its own output spool under .vtcode/ is all a command finds there)
    await run(client, mine, 'test "$(ls -A)" = .vtcode')
  })

  it('finishes what an erase cut short left: the moved-away folder goes first', async () => {
    const { client, root } = fixture
    const scope = { tenant: 'gamma', sessionId: 's3' }
    await run(client, scope, plantTraps(outside))
    // A crash after the move (step 2) and partway through the removal leaves this behind.
    const left = join(root, 'gamma', '.erase-s3')
    await mkdir(join(left, 'half', 'way'), { recursive: true })
    await symlink(outside, join(left, 'half', 'out-dir'))
    await symlink(join(outside, 'keep.txt'), join(left, 'half', 'way', 'out-file'))
    await writeFile(join(left, 'half', 'way', 'data.txt'), 'tenant data')
    await chmod(join(left, 'half'), 0)

    expect(await client.eraseWorkspace(scope)).toEqual({ ok: true, value: { state: 'erased' } })
    expect(await readdir(join(root, 'gamma'))).toEqual([])
    expect(await hostFiles()).toEqual(HOST_FILES)
    expect(await client.eraseWorkspace(scope)).toEqual({ ok: true, value: { state: 'absent' } })
  })

  it('a runner killed while it erases leaves nothing the next erase does not remove', async () => {
    const root = await mkdtemp(join(tmpdir(), 'turnline-erase-crash-'))
    const secret = 'erase-crash-secret-0123456789abcdef'
    let runner = await startRunnerProcess({ root, secret })
    try {
      const scope = { tenant: 'delta', sessionId: 's4' }
      let client = new HttpSandboxRunner({ url: runner.url, secret, retries: 0 })
      await run(client, scope, 'mkdir many && cd many && seq 1 20000 | xargs touch')
      await run(client, scope, plantTraps(outside))
      let answered = false
      const erasing = client.eraseWorkspace(scope).then(
        () => {
          answered = true
        },
        () => undefined,
      )
      // The workspace has been moved away: the removal is under way (or, on a fast machine,
      // over already — then this test checks an erase after a completed one).
      await until('the erase to begin', () =>
        answered || existsSync(join(root, 'delta', '.erase-s4')) ? true : undefined,
      )
      await runner.crash()
      await erasing
      runner = await startRunnerProcess({ root, secret })
      client = new HttpSandboxRunner({ url: runner.url, secret })
      const again = await client.eraseWorkspace(scope)
      expect(again.ok && ['erased', 'absent'].includes(again.value.state)).toBe(true)
      expect(await readdir(join(root, 'delta'))).toEqual([])
      expect(existsSync(join(root, '.runner-state', 'delta', 's4'))).toBe(false)
      expect(await hostFiles()).toEqual(HOST_FILES)
    } finally {
      await runner.stop()
      await rm(root, { recursive: true, force: true })
    }
  })

  it('never lists a whole folder at once: a tree of huge folders costs the runner no memory', async () => {
    // A name costs a tenant a directory entry (hard links: no file of their own), the runner a
    // listed entry of ~200 bytes; a folder on ext4 holds millions, the eraser holds 64 at once.
    const root = await mkdtemp(join(tmpdir(), 'turnline-erase-names-'))
    const secret = 'erase-names-secret-0123456789abcdef'
    const runner = await startRunnerProcess({ root, secret })
    try {
      const scope = { tenant: 'epsilon', sessionId: 's5' }
      const client = new HttpSandboxRunner({ url: runner.url, secret })
      // A file has at most 65 000 links on ext4: one file for each folder.
      await run(client, scope, 'mkdir -p a/b/c/d && touch a/f a/b/f a/b/c/f a/b/c/d/f')
      const workspace = join(root, 'epsilon', 's5')
      for (const folder of ['a', 'a/b', 'a/b/c', 'a/b/c/d']) {
        const file = join(workspace, folder, 'f')
        for (let i = 0; i < 60_000; i += 1000) {
          await Promise.all(
            Array.from({ length: 1000 }, (_, j) =>
              link(file, join(workspace, folder, `n${i + j}`)),
            ),
          )
        }
      }
      const before = runner.peakMemoryBytes()
      expect(await client.eraseWorkspace(scope)).toEqual({ ok: true, value: { state: 'erased' } })
      expect(await readdir(join(root, 'epsilon'))).toEqual([])
      // Listed whole, the four folders on the way down: 240 000 entries held at once.
      expect(runner.peakMemoryBytes() - before).toBeLessThan(40 * 1024 * 1024)
    } finally {
      await runner.stop()
      await rm(root, { recursive: true, force: true })
    }
  })
})

import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEngine } from '../support/engine-harness.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { attachRunner } from '../support/sandbox-engine.ts'

/** A sub-agent (a fork with isolation "worktree") works in a git worktree of the source. */
const SECRET = 'runner-secret-worktree-01'
let engine: Awaited<ReturnType<typeof startEngine>>
let runner: RunnerProcess
let root: string

beforeAll(async () => {
  engine = await startEngine()
  root = await mkdtemp(join(tmpdir(), 'turnline-worktree-'))
  runner = await attachRunner(engine, { root, secret: SECRET })
})
afterAll(async () => {
  await runner?.stop()
  await engine?.close()
  await rm(root, { recursive: true, force: true })
})

const call = (id: string, name: string, args: object) => ({
  id,
  name,
  arguments: JSON.stringify(args),
})

async function findDir(dir: string, name: string): Promise<string | undefined> {
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() && entry.name === name) return join(entry.parentPath, entry.name)
  }
  return undefined
}

describe('worktree isolation', () => {
  it("keeps a sub-agent's changes in its own worktree, refusing paths that leave it", async () => {
    const { service, mock } = engine
    const { session_id } = await service.createSession('local', {})
    // The source workspace becomes a git repository with one commit.
    mock.enqueue(
      {
        toolCalls: [
          call('g1', 'exec_command', {
            cmd: 'git init -q && echo base > base.txt && git add . && git -c user.email=t@t -c user.name=t commit -qm init && echo ok',
            yield_time_ms: 5000,
          }),
        ],
      },
      { text: 'repo ready', usage: { input_tokens: 10, output_tokens: 2 } },
    )
    expect((await service.stepTurn('local', session_id, { input: 'init' })).status).toBe(
      'completed',
    )

    mock.enqueue({ text: 'summary of the parent' })
    const child = await service.fork('local', session_id, { isolation: 'worktree' })
    mock.enqueue(
      { toolCalls: [call('w1', 'write_file', { path: 'feature.txt', content: 'child work\n' })] },
      { toolCalls: [call('w2', 'write_file', { path: '../../../escaped.txt', content: 'x' })] },
      { toolCalls: [call('r1', 'read_file', { path: 'base.txt' })] },
      { text: 'done' },
    )
    const turn = await service.stepTurn('local', child.session_id, { input: 'add a feature' })
    expect(turn.status).toBe('completed')
    const outputs = turn.events.flatMap((e) =>
      e.type === 'item.completed' && e.item.type === 'tool_output' ? [e.item] : [],
    )
    expect(outputs[0]).toMatchObject({ status: 'completed' })
    expect(outputs[1]).toMatchObject({
      status: 'failed',
      output: expect.stringContaining('outside this sandbox'),
    })
    expect(outputs[2]?.output).toContain('base')
    const change = turn.events.find(
      (e) => e.type === 'item.completed' && e.item.type === 'file_change',
    )
    expect(change).toMatchObject({ item: { changes: [{ path: 'feature.txt', kind: 'add' }] } })

    const worktrees = await findDir(root, 'worktrees')
    expect(worktrees).toBeDefined()
    const [name] = await readdir(worktrees as string)
    const tree = join(worktrees as string, name as string)
    expect(await readFile(join(tree, 'feature.txt'), 'utf8')).toBe('child work\n')
    expect(existsSync(join(tree, '..', '..', '..', 'feature.txt'))).toBe(false)
    expect(
      (await readdir(root, { recursive: true })).some((p) => String(p).endsWith('escaped.txt')),
    ).toBe(false)
  })
})

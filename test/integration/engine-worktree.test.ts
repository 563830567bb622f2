import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'
import { toolCall } from '../support/model-tool-call.ts'

/** A sub-agent (a fork with isolation "worktree") works in a git worktree of the source. */
const fixture = useEngineWithRunner('worktree')

async function findDir(dir: string, name: string): Promise<string | undefined> {
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() && entry.name === name) return join(entry.parentPath, entry.name)
  }
  return undefined
}

describe('worktree isolation', () => {
  it("keeps a sub-agent's changes in its own worktree, refusing paths that leave it", async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', {})
    // The source workspace becomes a git repository with one commit.
    mock.enqueue(
      {
        toolCalls: [
          toolCall('g1', 'exec_command', {
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
      {
        toolCalls: [toolCall('w1', 'write_file', { path: 'feature.txt', content: 'child work\n' })],
      },
      { toolCalls: [toolCall('w2', 'write_file', { path: '../../../escaped.txt', content: 'x' })] },
      { toolCalls: [toolCall('r1', 'read_file', { path: 'base.txt' })] },
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

    const worktrees = await findDir(fixture.root, 'worktrees')
    expect(worktrees).toBeDefined()
    const [name] = await readdir(worktrees as string)
    const tree = join(worktrees as string, name as string)
    expect(await readFile(join(tree, 'feature.txt'), 'utf8')).toBe('child work\n')
    expect(existsSync(join(tree, '..', '..', '..', 'feature.txt'))).toBe(false)
    expect(
      (await readdir(fixture.root, { recursive: true })).some((p) =>
        String(p).endsWith('escaped.txt'),
      ),
    ).toBe(false)
  })
})

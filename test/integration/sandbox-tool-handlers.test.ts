import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { sandboxToolHandlers } from '../../src/core/sandbox/sandbox-tool-handlers.ts'
import type { ToolRunContext, ToolRunResult } from '../../src/core/tools/tool-handler.ts'
import { ToolRegistry } from '../../src/core/tools/tool-registry.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'

const fixture = useRunnerProcess('handlers')
let registry: ToolRegistry
let items = 100

beforeAll(() => {
  registry = new ToolRegistry(sandboxToolHandlers({ runner: fixture.client, reserveMs: 0 }))
})

function context(sessionId: string, remainingMs = 30_000): ToolRunContext {
  const call = items++
  return {
    tenant: 'acme',
    sessionId,
    toolCallId: `call_${call}`,
    itemId: `item_${call}`,
    rawArguments: '{}',
    now: Date.now,
    nextItemId: () => `item_${items++}`,
    remainingMs: () => remainingMs,
  }
}

async function run(name: string, args: Record<string, unknown>, ctx: ToolRunContext) {
  const handler = registry.get(name)
  if (!handler) throw new Error(`no handler ${name}`)
  return handler.run(args, ctx)
}

function done(result: ToolRunResult) {
  if (result.kind !== 'done') throw new Error(`expected done: ${JSON.stringify(result)}`)
  return result
}

describe('sandbox tool handlers', () => {
  it('offer the six tools in VT Code order, only read_file read-only', () => {
    expect(registry.catalog.map((d) => d.name)).toEqual([
      'exec_command',
      'write_stdin',
      'apply_patch',
      'read_file',
      'unified_exec',
      'write_file',
    ])
    expect(registry.names.filter((n) => registry.get(n)?.readOnly)).toEqual(['read_file'])
  })

  it('a short invocation budget still lets a quick command finish within it', async () => {
    const quick = done(
      await run('exec_command', { cmd: 'sleep 0.3; echo quick' }, context('h1', 2000)),
    )
    expect(JSON.parse(quick.output)).toMatchObject({ output: 'quick\n', exit_code: 0 })
  })

  it('a wait beyond the invocation budget is pending, and resume finishes it with the exit code', async () => {
    const started = done(
      await run(
        'exec_command',
        { cmd: 'sleep 1; echo fin; exit 4', yield_time_ms: 0 },
        context('h1'),
      ),
    )
    const id = JSON.parse(started.output).session_id as string
    const handler = registry.get('write_stdin')!
    const pending = await handler.run(
      { session_id: id, action: 'wait', wait_timeout_seconds: 300 },
      context('h1', 1000),
    )
    if (pending.kind !== 'pending') throw new Error(JSON.stringify(pending))
    let stored = JSON.parse(JSON.stringify(pending.resume))
    // Resumed as the runner's exit callback would; each resume waits up to its budget, and a
    // command still running on a slow machine is pending again.
    let resumed = await handler.resume!(stored, context('h1', 1000))
    while (resumed.kind === 'pending') {
      stored = JSON.parse(JSON.stringify(resumed.resume))
      resumed = await handler.resume!(stored, context('h1', 1000))
    }
    const finished = done(resumed)
    // A non-zero exit fails the call (VT Code: status `failed` with the exit code).
    expect(finished).toMatchObject({ ok: false, exitCode: 4 })
    expect(JSON.parse(finished.output)).toMatchObject({
      output: 'fin\n',
      exit_code: 4,
      wait_deadline_seconds: 300,
    })
    expect(done(await handler.resume!({ nonsense: true }, context('h1'))).ok).toBe(false)
  })

  it('file tools add file_change items; a malformed patch changes nothing and adds none', async () => {
    const ctx = context('h2')
    const added = done(await run('write_file', { path: 'notes.md', content: 'a\nb\n' }, ctx))
    expect(added.events).toEqual([
      {
        type: 'item.completed',
        item: {
          id: expect.stringMatching(/^item_\d+$/),
          type: 'file_change',
          changes: [{ path: 'notes.md', kind: 'add' }],
          status: 'completed',
        },
      },
    ])
    const patched = done(
      await run(
        'apply_patch',
        {
          input:
            '*** Begin Patch\n*** Update File: notes.md\n@@\n-b\n+B\n*** Add File: more.md\n+m\n*** End Patch',
        },
        context('h2'),
      ),
    )
    expect(patched.output).toBe('Success. Updated the following files:\nM notes.md\nA more.md')
    expect(patched.events?.[0]).toMatchObject({
      item: {
        type: 'file_change',
        changes: [
          { path: 'notes.md', kind: 'update' },
          { path: 'more.md', kind: 'add' },
        ],
        status: 'completed',
      },
    })
    const malformed = done(
      await run('apply_patch', { input: '*** Begin Patch\n+x\n*** End Patch' }, context('h2')),
    )
    expect(malformed).toMatchObject({ ok: false, output: expect.stringContaining('invalid patch') })
    expect(malformed.events).toBeUndefined()
    const mismatch = done(
      await run(
        'apply_patch',
        {
          input:
            '*** Begin Patch\n*** Delete File: more.md\n*** Update File: notes.md\n@@\n-zzz\n+y\n*** End Patch',
        },
        context('h2'),
      ),
    )
    expect(mismatch.ok).toBe(false)
    expect(mismatch.output).toContain('nothing was changed')
    expect(mismatch.events?.[0]).toMatchObject({
      item: {
        type: 'file_change',
        changes: [
          { path: 'more.md', kind: 'delete' },
          { path: 'notes.md', kind: 'update' },
        ],
        status: 'failed',
      },
    })
    expect(await readFile(join(fixture.root, 'acme', 'h2', 'more.md'), 'utf8')).toBe('m\n')
    const read = done(
      await run('read_file', { path: 'notes.md', offset: 2, limit: 1 }, context('h2')),
    )
    expect(read.output).toBe('B\n')
    const escaped = done(await run('read_file', { path: '../h1/x' }, context('h2')))
    expect(escaped).toMatchObject({
      ok: false,
      output: expect.stringContaining('leave the workspace'),
    })
  })
})

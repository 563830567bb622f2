import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PendingWaitSchema } from '../../src/contract/sandbox-tool-args.ts'
import type { ExecResponse } from '../../src/core/sandbox/exec-response.ts'
import { type ExecToolResult, resumeWait, runExecTool } from '../../src/core/sandbox/exec-tools.ts'
import { execToolCalls } from '../support/exec-tool-context.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'

const fixture = useRunnerProcess('exec-tools', { callbacks: {} })
const { context, freshScope } = execToolCalls(() => fixture.client, 'tools')

function done(result: ExecToolResult) {
  if (result.kind !== 'done') throw new Error(`expected done, got ${JSON.stringify(result)}`)
  expect(JSON.parse(result.output)).toEqual(result.response)
  return { ...result, response: result.response as ExecResponse }
}

describe('exec_command and write_stdin', () => {
  it('a command outlives its yield; a wait returns the exit code, output and wait fields', async () => {
    const scope = freshScope()
    const first = done(
      await runExecTool(
        'exec_command',
        JSON.stringify({ cmd: 'echo start; sleep 1.5; echo end; exit 3', yield_time_ms: 300 }),
        context(scope),
      ),
    )
    expect(first.ok).toBe(true)
    const id = first.response.session_id
    expect(first.response).toMatchObject({
      success: true,
      output: 'start\n',
      is_exited: false,
      command: 'echo start; sleep 1.5; echo end; exit 3',
      backend: 'pipe',
      next_continue_args: { session_id: id },
      next_wait_args: { session_id: id, action: 'wait', wait_timeout_seconds: 600 },
      total_output_bytes: 6,
      output_truncated: false,
    })
    expect(id).toMatch(/^run-/)
    expect(first.response.process_id).toBeGreaterThan(0)
    expect(first.command).toMatchObject({ status: 'in_progress', aggregated_output: 'start\n' })

    const waited = done(
      await runExecTool(
        'write_stdin',
        { session_id: id, action: 'wait', wait_timeout_seconds: 10 },
        context(scope),
      ),
    )
    expect(waited.response).toMatchObject({
      success: true,
      output: 'end\n',
      is_exited: true,
      exit_code: 3,
      wait_deadline_seconds: 10,
      total_output_bytes: 10,
    })
    expect(waited.response.waited_seconds).toBeGreaterThan(0.5)
    expect(waited.response).not.toHaveProperty('next_wait_args')
    expect(waited.exitCode).toBe(3)
    expect(waited.command).toEqual({
      command: 'echo start; sleep 1.5; echo end; exit 3',
      aggregated_output: 'end\n',
      exit_code: 3,
      status: 'failed',
    })
  })

  it('a wait longer than the invocation budget is pending; resumed after the exit it reports all output', async () => {
    const scope = freshScope()
    const first = done(
      await runExecTool(
        'exec_command',
        { cmd: 'echo a; sleep 1.2; echo slow-done', yield_time_ms: 100 },
        context(scope),
      ),
    )
    const id = first.response.session_id
    const before = Date.now()
    const pending = await runExecTool(
      'write_stdin',
      { session_id: id, action: 'wait', wait_timeout_seconds: 600 },
      context(scope, { budgetMs: 500 }),
    )
    expect(Date.now() - before).toBeLessThan(1000)
    if (pending.kind !== 'pending') throw new Error(JSON.stringify(pending))
    const stored = PendingWaitSchema.parse(JSON.parse(JSON.stringify(pending.wait)))
    expect(stored).toMatchObject({ exec_session_id: id, requested_seconds: 600, since: 2 })
    expect(stored.deadline - stored.started_at).toBe(600_000)

    const again = await resumeWait(stored, context(scope, { budgetMs: 500 }))
    expect(again.kind).toBe('pending')

    const notice = await fixture.receiver.accepted(id)
    expect(notice.callback).toMatchObject({ exit_code: 0, total_output_bytes: 12 })
    const resumed = done(await resumeWait(stored, context(scope, { budgetMs: 500 })))
    expect(resumed.response).toMatchObject({
      output: 'slow-done\n',
      is_exited: true,
      exit_code: 0,
      wait_deadline_seconds: 600,
    })
    expect(resumed.response.waited_seconds).toBeGreaterThanOrEqual(1)
    expect(resumed.command?.status).toBe('completed')
  })

  it('caps a wait at the ceiling, and the deadline leaves the command running', async () => {
    const scope = freshScope()
    const id = done(
      await runExecTool('exec_command', { cmd: 'sleep 20', yield_time_ms: 0 }, context(scope)),
    ).response.session_id
    const began = Date.now()
    const waited = done(
      await runExecTool(
        'write_stdin',
        { session_id: id, action: 'wait', timeout_seconds: 99_999 },
        context(scope, { ceilingSeconds: 1 }),
      ),
    )
    expect(Date.now() - began).toBeGreaterThanOrEqual(900)
    expect(waited.response).toMatchObject({ is_exited: false, wait_deadline_seconds: 1 })
    expect(waited.response.next_wait_args?.session_id).toBe(id)
    const polled = done(
      await runExecTool('write_stdin', { session_id: id, chars: '' }, context(scope)),
    )
    expect(polled.response.is_exited).toBe(false)
    await fixture.client.close(scope, id)
  })

  it('writes stdin and polls', async () => {
    const scope = freshScope()
    const id = done(
      await runExecTool(
        'exec_command',
        { cmd: 'read a; echo "a=$a"; read b; echo "b=$b"', yield_time_ms: 100 },
        context(scope),
      ),
    ).response.session_id
    const one = done(
      await runExecTool(
        'write_stdin',
        { session_id: id, chars: 'x\n', yield_time_ms: 400 },
        context(scope),
      ),
    )
    expect(one.response).toMatchObject({ output: 'a=x\n', is_exited: false })
    const two = done(
      await runExecTool(
        'write_stdin',
        { session_id: id, action: 'write', chars: 'y\n', yield_time_ms: 2000 },
        context(scope),
      ),
    )
    expect(two.response).toMatchObject({ output: 'b=y\n', is_exited: true, exit_code: 0 })
  })

  it('a retried call re-attaches instead of running the command again', async () => {
    const scope = freshScope()
    const ctx = context(scope)
    const args = { cmd: 'echo ran >> count.txt; echo ok', yield_time_ms: 1000 }
    const a = done(await runExecTool('exec_command', args, ctx))
    const b = done(await runExecTool('exec_command', args, ctx))
    expect(b.response.session_id).toBe(a.response.session_id)
    expect(b.response.output).toBe('ok\n')
    expect(
      await readFile(join(fixture.root, scope.tenant, scope.sessionId, 'count.txt'), 'utf8'),
    ).toBe('ran\n')
  })

  it('invalid arguments, escapes and escalation are answered without running anything', async () => {
    const scope = freshScope()
    expect(await runExecTool('exec_command', '{"cmd":', context(scope))).toMatchObject({
      kind: 'invalid',
    })
    expect(await runExecTool('exec_command', { yield_time_ms: 5 }, context(scope))).toMatchObject({
      kind: 'invalid',
      message: expect.stringContaining('cmd'),
    })
    expect(await runExecTool('write_stdin', { session_id: 'run-x' }, context(scope))).toMatchObject(
      {
        kind: 'invalid',
        message: expect.stringContaining('chars'),
      },
    )
    const escaped = done(
      await runExecTool('exec_command', { cmd: 'touch escaped', workdir: '../..' }, context(scope)),
    )
    expect(escaped).toMatchObject({
      ok: false,
      response: { success: false, error: expect.stringContaining('workspace') },
    })
    const escalate = done(
      await runExecTool(
        'exec_command',
        { cmd: 'touch escalated', sandbox_permissions: 'require_escalated' },
        context(scope),
      ),
    )
    expect(escalate.ok).toBe(false)
    const unknown = done(
      await runExecTool(
        'write_stdin',
        { session_id: 'run-0000000000', action: 'wait' },
        context(scope),
      ),
    )
    expect(unknown.response).toMatchObject({
      success: false,
      error: expect.stringContaining('no exec session'),
    })
    const entries = await readFile(
      join(fixture.root, scope.tenant, scope.sessionId, 'escalated'),
    ).catch(() => 'absent')
    expect(entries).toBe('absent')
  })
})

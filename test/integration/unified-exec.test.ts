import { describe, expect, it } from 'vitest'
import type { ExecResponse } from '../../src/core/sandbox/exec-response.ts'
import { WRITE_STDIN_TOOL } from '../../src/core/sandbox/exec-tool-schemas.ts'
import { type ExecToolResult, resumeWait } from '../../src/core/sandbox/exec-tools.ts'
import { sandboxToolHandlers } from '../../src/core/sandbox/sandbox-tool-handlers.ts'
import {
  runUnifiedExec,
  UNIFIED_EXEC_TOOL,
  unifiedExecAction,
} from '../../src/core/sandbox/unified-exec-tool.ts'
import { execToolCalls } from '../support/exec-tool-context.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'

const fixture = useRunnerProcess('unified-exec', { callbacks: {} })
const { context, freshScope } = execToolCalls(() => fixture.client, 'unified')

function done(result: ExecToolResult) {
  if (result.kind !== 'done') throw new Error(`expected done, got ${JSON.stringify(result)}`)
  return { ...result, response: JSON.parse(result.output) as ExecResponse }
}

describe('unified_exec', () => {
  it("has write_stdin's wait: the same action enum entry, deadline fields and output budget", () => {
    const own = UNIFIED_EXEC_TOOL.parameters as { properties: Record<string, unknown> }
    const stdin = WRITE_STDIN_TOOL.parameters as { properties: Record<string, unknown> }
    expect((own.properties.action as { enum: string[] }).enum).toEqual([
      'run',
      'write',
      'poll',
      'continue',
      'wait',
      'close',
    ])
    for (const field of ['wait_timeout_seconds', 'timeout_seconds', 'max_output_tokens']) {
      expect(own.properties[field]).toMatchObject({
        type: (stdin.properties[field] as { type: string }).type,
      })
    }
  })

  it('infers the action as VT Code does', () => {
    expect(unifiedExecAction({ cmd: 'ls' })).toBe('run')
    expect(unifiedExecAction({ command: 'ls' })).toBe('run')
    expect(unifiedExecAction({ session_id: 'run-1', chars: 'y\n' })).toBe('write')
    expect(unifiedExecAction({ session_id: 'run-1' })).toBe('poll')
    expect(unifiedExecAction({ action: 'wait', session_id: 'run-1' })).toBe('wait')
    expect(unifiedExecAction({})).toBeUndefined()
  })

  it('run, write, continue and wait give the bounded exec response; wait returns the exit', async () => {
    const scope = freshScope()
    const started = done(
      await runUnifiedExec(
        { cmd: 'read line; echo "got $line"; sleep 1; echo bye; exit 5', yield_time_ms: 200 },
        context(scope),
      ),
    )
    const id = started.response.session_id
    expect(started.response).toMatchObject({
      success: true,
      is_exited: false,
      next_wait_args: { session_id: id, action: 'wait', wait_timeout_seconds: 600 },
    })
    const wrote = done(
      await runUnifiedExec(
        { action: 'continue', session_id: id, chars: 'hello\n', yield_time_ms: 300 },
        context(scope),
      ),
    )
    expect(wrote.response.output).toBe('got hello\n')
    const waited = done(
      await runUnifiedExec(
        { action: 'wait', session_id: id, wait_timeout_seconds: 10 },
        context(scope),
      ),
    )
    expect(waited.response).toMatchObject({
      output: 'bye\n',
      is_exited: true,
      exit_code: 5,
      wait_deadline_seconds: 10,
    })
    expect(waited.response.waited_seconds).toBeGreaterThan(0.3)
    // A non-zero exit fails the call, with its exit code.
    expect(waited).toMatchObject({ ok: false, exitCode: 5 })
  })

  it("a wait longer than the invocation is pending and resumes like write_stdin's", async () => {
    const scope = freshScope()
    const started = done(
      await runUnifiedExec({ cmd: 'sleep 1.2; echo late', yield_time_ms: 50 }, context(scope)),
    )
    const pending = await runUnifiedExec(
      { action: 'wait', session_id: started.response.session_id, timeout_seconds: 600 },
      context(scope, { budgetMs: 300 }),
    )
    if (pending.kind !== 'pending') throw new Error(JSON.stringify(pending))
    expect(pending.wait).toMatchObject({ requested_seconds: 600 })
    await fixture.receiver.accepted(started.response.session_id)
    const resumed = done(await resumeWait(pending.wait, context(scope, { budgetMs: 300 })))
    expect(resumed.response).toMatchObject({ output: 'late\n', exit_code: 0, is_exited: true })
    expect(resumed.ok).toBe(true)
  })

  it('close ends a running command; bad calls are refused with a reason', async () => {
    const scope = freshScope()
    const started = done(
      await runUnifiedExec({ cmd: 'sleep 30', yield_time_ms: 0 }, context(scope)),
    )
    const id = started.response.session_id
    const closed = done(await runUnifiedExec({ action: 'close', session_id: id }, context(scope)))
    expect(JSON.parse(closed.output)).toEqual({ success: true, session_id: id, backend: 'pipe' })
    const polled = done(
      await runUnifiedExec({ session_id: id, yield_time_ms: 250 }, context(scope)),
    )
    expect(polled.response.is_exited).toBe(true)

    expect(await runUnifiedExec({ action: 'run' }, context(scope))).toEqual({
      kind: 'invalid',
      message: 'unified_exec: "run" needs cmd',
    })
    expect(await runUnifiedExec({ action: 'wait' }, context(scope))).toEqual({
      kind: 'invalid',
      message: 'unified_exec: "wait" needs session_id',
    })
    expect(await runUnifiedExec({ action: 'write', session_id: id }, context(scope))).toEqual({
      kind: 'invalid',
      message: 'unified_exec: "write" needs chars',
    })
  })

  it('is one of the sandbox handlers', () => {
    const names = sandboxToolHandlers({ runner: fixture.client }).map((h) => h.definition.name)
    expect(names).toContain('unified_exec')
  })
})

import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ExecResponse } from '../../src/core/sandbox/exec-response.ts'
import { type ExecToolResult, runExecTool } from '../../src/core/sandbox/exec-tools.ts'
import { execToolCalls } from '../support/exec-tool-context.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'

const fixture = useRunnerProcess('exec-output')
const { context, freshScope } = execToolCalls(() => fixture.client, 'output')

function done(result: ExecToolResult) {
  if (result.kind !== 'done') throw new Error(`expected done, got ${JSON.stringify(result)}`)
  return { ...result, response: result.response as ExecResponse }
}

describe('command output through exec_command and write_stdin', () => {
  it('10 MB of output: a bounded preview, exact byte count, the whole file in the spool', async () => {
    const scope = freshScope()
    const total = 10 * 1024 * 1024
    const first = done(
      await runExecTool(
        'exec_command',
        {
          cmd: `i=0; while [ $i -lt 2000 ]; do printf '\\033[32mline %05d\\033[0m\\n' $i; i=$((i+1)); done; head -c ${total - 2000 * 20} /dev/zero | tr '\\0' z; echo; echo tail-marker`,
          yield_time_ms: 30_000,
        },
        context(scope),
      ),
    )
    const r = first.response
    expect(r.is_exited).toBe(true)
    expect(r.total_output_bytes).toBe(total + 13)
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(6 * 1024)
    expect(r.output.replace(/\n$/, '').split('\n').length).toBeLessThanOrEqual(80)
    expect(r.output).not.toContain('\u001b')
    expect(r.output.startsWith('line 00000\nline 00001\n')).toBe(true)
    expect(r.output.endsWith('tail-marker\n')).toBe(true)
    expect(r).toMatchObject({
      truncated: true,
      output_truncated: true,
      output_spooled: true,
      spool_complete: true,
    })
    expect(r.spool_path).toBe(`.vtcode/context/tool_outputs/write_stdin_${r.session_id}.txt`)
    expect(first.spoolPath).toBe(r.spool_path)
    expect(
      (await stat(join(fixture.root, scope.tenant, scope.sessionId, r.spool_path!))).size,
    ).toBe(total + 13)
  })

  it('withholds the spool path while an exited command still drains, then gives it', async () => {
    const scope = freshScope()
    const cmd = "head -c 20000 /dev/zero | tr '\\0' a; (sleep 1; echo late) &"
    const first = done(
      await runExecTool('exec_command', { cmd, yield_time_ms: 500 }, context(scope)),
    )
    expect(first.response).toMatchObject({
      is_exited: true,
      exit_code: 0,
      spool_complete: false,
      spool_pending: true,
    })
    expect(first.response).not.toHaveProperty('spool_path')
    // Wait again until the background child has let go of stdout (about a second).
    let output = ''
    let later = first
    for (let round = 0; round < 40 && later.response.spool_complete !== true; round++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      later = done(
        await runExecTool(
          'write_stdin',
          { session_id: first.response.session_id, action: 'wait' },
          context(scope),
        ),
      )
      output += later.response.output
    }
    expect(output).toBe('late\n')
    expect(later.response).toMatchObject({
      total_output_bytes: 20005,
      spool_complete: true,
      output_spooled: true,
    })
    expect(later.response.spool_path).toContain(first.response.session_id)
  })
})

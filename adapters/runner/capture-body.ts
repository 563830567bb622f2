import type { ExecCapture } from '../../src/contract/runner-answers.ts'
import type { ExecSession } from './exec-session.ts'

/** The capture answer of start, write, poll, wait and close. */
export function captureBody(
  session: ExecSession,
  output: ExecCapture['output'],
  extra: { attached: boolean; wallTimeMs: number; waitedMs?: number; timedOut?: boolean },
): ExecCapture {
  const { info } = session
  return {
    exec_session_id: info.id,
    request_id: info.requestId,
    tool_call_id: info.toolCallId,
    command: info.command,
    workdir: info.workdir,
    backend: info.backend,
    state: session.state,
    ...(session.state === 'exited' && session.exitCode !== undefined
      ? { exit_code: session.exitCode }
      : {}),
    ...(session.state === 'running' && session.pid !== undefined ? { pid: session.pid } : {}),
    attached: extra.attached,
    output,
    total_output_bytes: session.total,
    spool: { path: info.spoolRel, complete: session.drained },
    wall_time_ms: Math.max(0, Math.round(extra.wallTimeMs)),
    ...(extra.waitedMs !== undefined ? { waited_ms: Math.max(0, Math.round(extra.waitedMs)) } : {}),
    ...(extra.timedOut !== undefined ? { timed_out: extra.timedOut } : {}),
  }
}

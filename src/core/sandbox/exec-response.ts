import type { ExecSnapshot } from '../../ports/sandbox-runner.ts'
import { outputPreview, PREVIEW_MAX_BYTES } from './exec-output-preview.ts'

/** Output above this many bytes is pointed to in the spool (VT Code's threshold). */
export const SPOOL_THRESHOLD_BYTES = 8192
/** What `next_wait_args` proposes. */
export const NEXT_WAIT_SECONDS = 600

/** The bounded JSON a command tool answers the model with (VT Code's unified exec response). */
export interface ExecResponse {
  success: boolean
  output: string
  truncated?: true
  wall_time: number
  session_id: string
  command: string
  working_directory: string
  backend: 'pipe' | 'pty'
  is_exited: boolean
  exit_code?: number
  process_id?: number
  next_continue_args?: { session_id: string }
  next_wait_args?: { session_id: string; action: 'wait'; wait_timeout_seconds: number }
  next_action_hint?: string
  waited_seconds?: number
  wait_deadline_seconds?: number
  total_output_bytes: number
  output_truncated: boolean
  spool_path?: string
  output_spooled?: true
  spool_complete?: boolean
  spool_pending?: true
  /** The whole output, kept as an output artifact of the session (read_tool_output, the API). */
  output_artifact_id?: string
  /** Why output over the inline limit was not kept as an artifact (a cap, an unreadable spool). */
  output_artifact_error?: string
  error?: string
}

/** The answer when nothing ran (refused by the runner or the policy). */
export interface ExecFailure {
  success: false
  error: string
  command?: string
}

/** The answer to closing a command (unified_exec `close`), as VT Code's. */
export interface ExecClosed {
  success: true
  session_id: string
  backend: 'pipe' | 'pty'
}

/** Data of the `command_execution` item for this capture. */
export interface CommandExecutionData {
  command: string
  aggregated_output: string
  exit_code?: number
  status: 'completed' | 'failed' | 'in_progress'
}

/** Preview bytes for a token budget: about 4 bytes a token, never above 6 KiB. */
export function previewBytes(maxOutputTokens: number): number {
  return Math.max(1, Math.min(maxOutputTokens * 4, PREVIEW_MAX_BYTES))
}

const round3 = (ms: number) => Math.round(ms) / 1000

/**
 * The response for one capture. Spool rule: when the output is large or cut and the spool is
 * complete or the command still runs, expose its path (a running command's file is a readable
 * partial snapshot); when the command has exited but its output is still draining, withhold the
 * path and say `spool_pending`.
 * Long: one response record, a field or two a line.
 */
export function execResponse(
  snap: ExecSnapshot,
  options: { maxOutputTokens: number; wait?: { waitedMs: number; deadlineSeconds: number } },
): ExecResponse {
  const preview = outputPreview(snap.output, previewBytes(options.maxOutputTokens))
  const state = snap.state
  const id = snap.execSessionId
  const running = state.status === 'running'
  const spooled = snap.totalOutputBytes > SPOOL_THRESHOLD_BYTES || preview.truncated
  const response: ExecResponse = {
    success: state.status !== 'lost',
    output: preview.text,
    ...(preview.truncated ? { truncated: true as const } : {}),
    wall_time: round3(snap.wallTimeMs),
    session_id: id,
    command: snap.command,
    working_directory: snap.workdir,
    backend: snap.backend,
    is_exited: !running,
    ...(state.status === 'exited' ? { exit_code: state.exitCode } : {}),
    ...(state.status === 'running' && state.pid !== undefined ? { process_id: state.pid } : {}),
    ...(running
      ? {
          next_continue_args: { session_id: id },
          next_wait_args: {
            session_id: id,
            action: 'wait' as const,
            wait_timeout_seconds: NEXT_WAIT_SECONDS,
          },
          next_action_hint:
            'The command is still running. Call write_stdin with next_wait_args to wait for its ' +
            'exit (the wait never kills it), or with chars to send input.',
        }
      : {}),
    ...(options.wait
      ? {
          waited_seconds: round3(options.wait.waitedMs),
          wait_deadline_seconds: options.wait.deadlineSeconds,
        }
      : {}),
    total_output_bytes: snap.totalOutputBytes,
    output_truncated: preview.truncated,
    ...(spooled && (snap.spool.complete || running)
      ? {
          spool_path: snap.spool.path,
          output_spooled: true as const,
          spool_complete: snap.spool.complete,
        }
      : {}),
    ...(spooled && !snap.spool.complete && !running
      ? { spool_complete: false, spool_pending: true as const }
      : {}),
  }
  if (state.status === 'lost') {
    response.error =
      'the sandbox runner restarted while this command ran; its exit status is unknown ' +
      '(the output it produced is in the spool file)'
    response.spool_path = snap.spool.path
  }
  return response
}

export function commandExecution(snap: ExecSnapshot, response: ExecResponse): CommandExecutionData {
  const state = snap.state
  return {
    command: snap.command,
    aggregated_output: response.output,
    ...(state.status === 'exited' ? { exit_code: state.exitCode } : {}),
    status:
      state.status === 'running'
        ? 'in_progress'
        : state.status === 'exited' && state.exitCode === 0
          ? 'completed'
          : 'failed',
  }
}

import {
  UNIFIED_EXEC_ACTIONS,
  type UnifiedExecAction,
  type UnifiedExecArgs,
  UnifiedExecArgsSchema,
} from '../../contract/sandbox-tool-args.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { ExecClosed, ExecFailure } from './exec-response.ts'
import { maxOutputTokens, readArgs, waitDeadline } from './exec-tool-schemas.ts'
import type { ExecToolContext, ExecToolResult } from './exec-tools.ts'
import { runExecTool } from './exec-tools.ts'

/**
 * `unified_exec`: VT Code's command-session dispatcher as one model-facing tool. `run` starts a
 * command (as exec_command), `write` sends input, `poll` collects new output, `continue` writes
 * when given input and polls otherwise, `wait` blocks until the command exits or the deadline
 * passes (the deadline never kills it; a wait longer than the invocation ends the turn
 * `waiting`, exactly as write_stdin's), `close` ends the command. Every action answers with the
 * same bounded response as exec_command and write_stdin. Without `action` it is inferred as
 * VT Code does: a command → run, input → write, a session id → poll.
 */
export const UNIFIED_EXEC_TOOL: ToolDefinition = {
  name: 'unified_exec',
  description:
    'Run and drive shell commands in the session workspace. action "run" starts cmd and ' +
    'returns after yield_time_ms with a bounded preview; a command still running keeps its ' +
    'session_id for "write" (send chars), "poll" (new output), "continue" (write if chars are ' +
    'given, else poll), "wait" (block until it exits or wait_timeout_seconds pass, without ' +
    'killing it) and "close" (end it). The full output is kept in spool_path.',
  parameters: {
    type: 'object',
    properties: {
      action: { type: 'string', enum: [...UNIFIED_EXEC_ACTIONS] },
      cmd: { type: 'string', description: 'Shell command to run (action "run").' },
      command: { type: 'string', description: 'Alias of cmd.' },
      session_id: { type: 'string', description: 'The session_id a run returned.' },
      chars: { type: 'string', description: 'Characters to write to stdin (may be empty).' },
      input: { type: 'string', description: 'Alias of chars.' },
      yield_time_ms: {
        type: 'integer',
        minimum: 0,
        description: 'How long to collect output before returning (ms; run 10000, others 1000).',
      },
      ...waitDeadline,
      max_output_tokens: maxOutputTokens,
      workdir: {
        type: 'string',
        description: 'Working directory of a run, relative to the workspace.',
      },
      tty: { type: 'boolean', default: false, description: 'Run in a pseudo-terminal.' },
    },
  },
}

/** The action asked for, or the one VT Code infers from the fields given. */
export function unifiedExecAction(args: UnifiedExecArgs): UnifiedExecAction | undefined {
  if (args.action) return args.action
  if (args.cmd !== undefined || args.command !== undefined) return 'run'
  if (args.chars !== undefined || args.input !== undefined) return 'write'
  if (args.session_id !== undefined) return 'poll'
  return undefined
}

const defined = <T extends Record<string, unknown>>(value: T) =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined))

/** Runs one `unified_exec` call through the exec_command / write_stdin machinery. */
export async function runUnifiedExec(
  rawArgs: unknown,
  ctx: ExecToolContext,
): Promise<ExecToolResult> {
  const parsed = readArgs(UnifiedExecArgsSchema, rawArgs, 'unified_exec')
  if (!parsed.ok) return { kind: 'invalid', message: parsed.message }
  const a = parsed.value
  const action = unifiedExecAction(a)
  if (!action) {
    return {
      kind: 'invalid',
      message: 'unified_exec: give an action, or cmd (run), chars (write) or session_id (poll)',
    }
  }
  const chars = a.chars ?? a.input
  const common = defined({ yield_time_ms: a.yield_time_ms, max_output_tokens: a.max_output_tokens })
  if (action === 'run') {
    const cmd = a.cmd ?? a.command
    if (!cmd) return { kind: 'invalid', message: 'unified_exec: "run" needs cmd' }
    return runExecTool(
      'exec_command',
      { cmd, ...common, ...defined({ workdir: a.workdir, tty: a.tty }) },
      ctx,
    )
  }
  const sessionId = a.session_id
  if (!sessionId) return { kind: 'invalid', message: `unified_exec: "${action}" needs session_id` }
  if (action === 'close') return close(sessionId, ctx)
  if (action === 'wait') {
    const deadline = defined({
      wait_timeout_seconds: a.wait_timeout_seconds,
      timeout_seconds: a.timeout_seconds,
    })
    return runExecTool(
      'write_stdin',
      {
        session_id: sessionId,
        action: 'wait',
        ...deadline,
        ...defined({ max_output_tokens: a.max_output_tokens }),
      },
      ctx,
    )
  }
  const writes = action === 'write' || (action === 'continue' && chars !== undefined)
  if (action === 'write' && chars === undefined) {
    return { kind: 'invalid', message: 'unified_exec: "write" needs chars' }
  }
  return runExecTool(
    'write_stdin',
    writes
      ? { session_id: sessionId, action: 'write', chars: chars ?? '', ...common }
      : { session_id: sessionId, action: 'poll', chars: '', ...common },
    ctx,
  )
}

/** `close`: ends the command's process group; answers `{success, session_id, backend}`. */
async function close(sessionId: string, ctx: ExecToolContext): Promise<ExecToolResult> {
  const closed = await ctx.runner.close(ctx.scope, sessionId)
  if (!closed.ok) {
    const response: ExecFailure = { success: false, error: closed.refusal.message }
    return { kind: 'done', ok: false, response, output: JSON.stringify(response) }
  }
  const response: ExecClosed = {
    success: true,
    session_id: sessionId,
    backend: closed.value.backend,
  }
  return { kind: 'done', ok: true, response, output: JSON.stringify(response) }
}

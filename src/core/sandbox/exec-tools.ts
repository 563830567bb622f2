import {
  ExecCommandArgsSchema,
  type PendingWait,
  WriteStdinArgsSchema,
} from '../../contract/sandbox-tool-args.ts'
import type {
  ExecSnapshot,
  RunnerResult,
  SandboxRunner,
  SandboxScope,
} from '../../ports/sandbox-runner.ts'
import {
  type CommandExecutionData,
  commandExecution,
  type ExecClosed,
  type ExecFailure,
  type ExecResponse,
  execResponse,
  previewBytes,
} from './exec-response.ts'
import { EXEC_COMMAND_TOOL, readArgs, WRITE_STDIN_TOOL } from './exec-tool-schemas.ts'
import { execRequestId } from './runner-request-id.ts'

export { EXEC_COMMAND_TOOL, WRITE_STDIN_TOOL }
export const EXEC_TOOL_NAMES = ['exec_command', 'write_stdin'] as const
export type ExecToolName = (typeof EXEC_TOOL_NAMES)[number]

export const DEFAULT_CEILING_SECONDS = 3600
const DEFAULT_TOKENS = 10_000

export interface ExecToolContext {
  runner: SandboxRunner
  scope: SandboxScope
  /** The invocation: its model call id and (recommended) its item id. */
  call: { toolCallId: string; itemId?: string }
  now: () => number
  /** Milliseconds this invocation may still block on the runner. */
  budgetMs: number
  /** `long_running_command_ceiling_seconds` (default 3600). */
  ceilingSeconds?: number
}

export type ExecToolResult =
  | {
      kind: 'done'
      /** The command ran and, once exited, exited 0 (VT Code: a non-zero exit is `failed`). */
      ok: boolean
      response: ExecResponse | ExecFailure | ExecClosed
      /** What the model reads: the response as JSON. */
      output: string
      /** For a `command_execution` item; absent when nothing ran. */
      command?: CommandExecutionData
      /** For the `tool_output` item. */
      spoolPath?: string
      exitCode?: number
    }
  | { kind: 'pending'; wait: PendingWait }
  | { kind: 'invalid'; message: string }

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value))

/** Runs one `exec_command` or `write_stdin` call against the runner. */
export async function runExecTool(
  name: ExecToolName,
  rawArgs: unknown,
  ctx: ExecToolContext,
): Promise<ExecToolResult> {
  return name === 'exec_command' ? execCommand(rawArgs, ctx) : writeStdin(rawArgs, ctx)
}

async function execCommand(rawArgs: unknown, ctx: ExecToolContext): Promise<ExecToolResult> {
  const args = readArgs(ExecCommandArgsSchema, rawArgs, 'exec_command')
  if (!args.ok) return { kind: 'invalid', message: args.message }
  const a = args.value
  if (a.sandbox_permissions === 'require_escalated' || a.sandbox_permissions === 'bypass_sandbox') {
    return refused(
      a.cmd,
      'commands run only inside the session sandbox; escalation is not available here. ' +
        'Run it with sandbox_permissions "use_default".',
    )
  }
  const tokens = a.max_output_tokens ?? DEFAULT_TOKENS
  const requestId = await execRequestId({
    tenant: ctx.scope.tenant,
    sessionId: ctx.scope.sessionId,
    toolCallId: ctx.call.toolCallId,
    ...(ctx.call.itemId !== undefined ? { itemId: ctx.call.itemId } : {}),
  })
  const result = await ctx.runner.start(ctx.scope, {
    requestId,
    toolCallId: ctx.call.toolCallId,
    cmd: a.cmd,
    ...(a.workdir !== undefined ? { workdir: a.workdir } : {}),
    tty: a.tty ?? false,
    yieldTimeMs: yieldWithin(clamp(a.yield_time_ms ?? 10_000, 0, 30_000), ctx),
    maxOutputBytes: Math.max(64, previewBytes(tokens)),
  })
  return finish(result, a.cmd, { maxOutputTokens: tokens })
}

async function writeStdin(rawArgs: unknown, ctx: ExecToolContext): Promise<ExecToolResult> {
  const args = readArgs(WriteStdinArgsSchema, rawArgs, 'write_stdin')
  if (!args.ok) return { kind: 'invalid', message: args.message }
  const a = args.value
  const tokens = a.max_output_tokens ?? DEFAULT_TOKENS
  const maxOutputBytes = Math.max(64, previewBytes(tokens))
  const action = a.action ?? (a.chars ? 'write' : 'poll')
  const id = a.session_id
  if (action === 'wait') {
    const ceiling = ctx.ceilingSeconds ?? DEFAULT_CEILING_SECONDS
    const seconds = Math.min(a.wait_timeout_seconds ?? a.timeout_seconds ?? ceiling, ceiling)
    const now = ctx.now()
    return waitFor(
      {
        exec_session_id: id,
        deadline: now + seconds * 1000,
        started_at: now,
        requested_seconds: seconds,
        since: -1,
        max_output_tokens: tokens,
      },
      ctx,
    )
  }
  if (action === 'poll' && a.chars) {
    return { kind: 'invalid', message: 'write_stdin: "poll" sends no input; use action "write"' }
  }
  const yieldMs = yieldWithin(
    clamp(a.yield_time_ms ?? (action === 'write' ? 250 : 1000), 250, 30_000),
    ctx,
  )
  const result =
    action === 'write'
      ? await ctx.runner.write(ctx.scope, {
          execSessionId: id,
          chars: a.chars ?? '',
          yieldTimeMs: yieldMs,
          maxOutputBytes,
        })
      : await ctx.runner.poll(ctx.scope, {
          execSessionId: id,
          yieldTimeMs: yieldMs,
          maxOutputBytes,
        })
  return finish(result, undefined, { maxOutputTokens: tokens })
}

/**
 * Continues a pending wait in a later invocation (after the runner's exit callback, or when the
 * engine decides to look again). Blocks only when the rest of the wait fits the budget.
 */
export function resumeWait(pending: PendingWait, ctx: ExecToolContext): Promise<ExecToolResult> {
  return waitFor(pending, ctx)
}

async function waitFor(pending: PendingWait, ctx: ExecToolContext): Promise<ExecToolResult> {
  const remaining = Math.max(0, pending.deadline - ctx.now())
  const blocks = remaining <= ctx.budgetMs
  const result = await ctx.runner.wait(ctx.scope, {
    execSessionId: pending.exec_session_id,
    timeoutMs: blocks ? remaining : 0,
    maxOutputBytes: Math.max(64, previewBytes(pending.max_output_tokens)),
    ...(pending.since >= 0 ? { since: pending.since } : {}),
  })
  if (result.ok && result.value.state.status === 'running' && !blocks) {
    return { kind: 'pending', wait: { ...pending, since: result.value.output.from } }
  }
  return finish(result, undefined, {
    maxOutputTokens: pending.max_output_tokens,
    wait: {
      waitedMs: ctx.now() - pending.started_at,
      deadlineSeconds: pending.requested_seconds,
    },
  })
}

/** A yield never blocks past the invocation budget. */
function yieldWithin(ms: number, ctx: ExecToolContext): number {
  return Math.max(0, Math.min(ms, ctx.budgetMs))
}

function finish(
  result: RunnerResult<ExecSnapshot>,
  cmd: string | undefined,
  options: Parameters<typeof execResponse>[1],
): ExecToolResult {
  if (!result.ok) return refused(cmd, result.refusal.message)
  const snap = result.value
  const response = execResponse(snap, options)
  return {
    kind: 'done',
    ok: response.success && (response.exit_code ?? 0) === 0,
    response,
    output: JSON.stringify(response),
    command: commandExecution(snap, response),
    ...(response.spool_path !== undefined ? { spoolPath: response.spool_path } : {}),
    ...(response.exit_code !== undefined ? { exitCode: response.exit_code } : {}),
  }
}

/** A call the runner (or the policy) refused: the model hears why; nothing ran. */
function refused(cmd: string | undefined, message: string): ExecToolResult {
  const response: ExecFailure = {
    success: false,
    error: message,
    ...(cmd !== undefined ? { command: cmd } : {}),
  }
  return { kind: 'done', ok: false, response, output: JSON.stringify(response) }
}

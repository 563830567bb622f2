import { PendingWaitSchema } from '../../contract/sandbox-tool-args.ts'
import type { SandboxRunner } from '../../ports/sandbox-runner.ts'
import type { ToolHandler, ToolRunContext, ToolRunResult } from '../tools/tool-handler.ts'
import {
  EXEC_COMMAND_TOOL,
  type ExecToolContext,
  type ExecToolName,
  type ExecToolResult,
  resumeWait,
  runExecTool,
  WRITE_STDIN_TOOL,
} from './exec-tools.ts'
import {
  APPLY_PATCH_TOOL,
  type FileToolName,
  READ_FILE_TOOL,
  runFileTool,
  WRITE_FILE_TOOL,
} from './file-tools.ts'
import { type SpoolKeeping, withKeptOutput } from './spool-artifact.ts'
import { runUnifiedExec, UNIFIED_EXEC_TOOL } from './unified-exec-tool.ts'

export interface SandboxToolOptions {
  runner: SandboxRunner
  /** `long_running_command_ceiling_seconds` (default 3600). */
  ceilingSeconds?: number
  /**
   * Milliseconds of the invocation budget kept for committing after a tool returns (default
   * 2000, and never more than a quarter of what remains, so a short budget still lets a command
   * run for most of it).
   */
  reserveMs?: number
  /** Where a finished command's output over the inline limit is kept whole. */
  spool?: SpoolKeeping
}

/**
 * The built-in sandbox tools as handlers of the tool registry: `exec_command`, `write_stdin`
 * and `unified_exec` (whose long waits end the invocation `pending` and continue in `resume`),
 * `read_file`, `write_file` and `apply_patch` (which add a `file_change` item). Sessions offer
 * `unified_exec` only when their harness asks for it (see turn-tools.ts).
 * Long: one table of the sandbox's tools.
 */
export function sandboxToolHandlers(options: SandboxToolOptions): ToolHandler[] {
  const execContext = (ctx: ToolRunContext): ExecToolContext => ({
    runner: options.runner,
    scope: { tenant: ctx.tenant, sessionId: ctx.sessionId },
    call: { toolCallId: ctx.toolCallId, itemId: ctx.itemId },
    now: ctx.now,
    budgetMs: budgetFor(ctx.remainingMs(), options.reserveMs ?? 2000),
    ...(options.ceilingSeconds !== undefined ? { ceilingSeconds: options.ceilingSeconds } : {}),
  })
  const exec = (name: ExecToolName | 'unified_exec'): ToolHandler => ({
    definition:
      name === 'exec_command'
        ? EXEC_COMMAND_TOOL
        : name === 'write_stdin'
          ? WRITE_STDIN_TOOL
          : UNIFIED_EXEC_TOOL,
    kind: 'builtin',
    readOnly: false,
    run: async (args, ctx) => {
      const context = execContext(ctx)
      const result =
        name === 'unified_exec'
          ? await runUnifiedExec(args, context)
          : await runExecTool(name, args, context)
      return execResult(await withKeptOutput(result, context.runner, context.scope, options.spool))
    },
    resume: async (state, ctx) => {
      const pending = PendingWaitSchema.safeParse(state)
      if (!pending.success) {
        return { kind: 'done', ok: false, output: `${name}: the stored wait is unreadable` }
      }
      const context = execContext(ctx)
      const result = await resumeWait(pending.data, context)
      return execResult(await withKeptOutput(result, context.runner, context.scope, options.spool))
    },
  })
  const file = (name: FileToolName): ToolHandler => ({
    definition:
      name === 'read_file'
        ? READ_FILE_TOOL
        : name === 'write_file'
          ? WRITE_FILE_TOOL
          : APPLY_PATCH_TOOL,
    kind: 'builtin',
    readOnly: name === 'read_file',
    run: async (args, ctx) => {
      const scope = { tenant: ctx.tenant, sessionId: ctx.sessionId }
      const result = await runFileTool(name, args, { runner: options.runner, scope })
      if (result.kind === 'invalid') return { kind: 'done', ok: false, output: result.message }
      return {
        kind: 'done',
        ok: result.ok,
        output: result.output,
        ...(result.fileChange
          ? {
              events: [
                {
                  type: 'item.completed',
                  item: { id: ctx.nextItemId(), type: 'file_change', ...result.fileChange },
                },
              ],
            }
          : {}),
      }
    },
  })
  return [
    exec('exec_command'),
    exec('write_stdin'),
    exec('unified_exec'),
    file('read_file'),
    file('write_file'),
    file('apply_patch'),
  ]
}

function execResult(result: ExecToolResult): ToolRunResult {
  if (result.kind === 'invalid') return { kind: 'done', ok: false, output: result.message }
  if (result.kind === 'pending') return { kind: 'pending', resume: { ...result.wait } }
  return {
    kind: 'done',
    ok: result.ok,
    output: result.output,
    ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
    ...(result.spoolPath !== undefined ? { spoolPath: result.spoolPath } : {}),
  }
}

/** What a tool call may block for: the remaining budget less the commit reserve (≤ ¼ of it). */
function budgetFor(remainingMs: number, reserveMs: number): number {
  const remaining = Math.max(0, remainingMs)
  return Math.floor(remaining - Math.min(reserveMs, remaining / 4))
}

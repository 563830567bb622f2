import { TurnlineError } from '../../contract/errors.ts'
import type { HookCommandResult, HookCommandRunner } from '../../ports/hook-command-runner.ts'
import type { SandboxPlacement } from '../../ports/sandbox-placement.ts'
import type { ExecSnapshot, SandboxRunner, SandboxScope } from '../../ports/sandbox-runner.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SandboxConfig } from '../engine/service-deps.ts'
import type { ToolHandler } from '../tools/tool-handler.ts'
import { placedRunner } from './placed-runner.ts'
import { sandboxToolHandlers } from './sandbox-tool-handlers.ts'
import { keepSpool, type SpoolKeeping } from './spool-artifact.ts'

/** What a session allows its commands (its `sandbox` settings). */
export interface CommandAllowance {
  network: boolean
}

/** A session's view of the sandbox: its built-in tools, worktrees and command hooks. */
export interface SessionSandbox {
  /** The built-in tools; with a placement they work inside that folder of that workspace. */
  tools(
    ref: SessionRef,
    placement?: SandboxPlacement,
    allow?: CommandAllowance,
    spool?: SpoolKeeping,
  ): ToolHandler[]
  /** A git worktree of `ref`'s workspace for a sub-agent (`isolation: "worktree"`). */
  isolate(ref: SessionRef, name: string): Promise<SandboxPlacement>
  runCommand(ref: SessionRef, allow?: CommandAllowance, spool?: SpoolKeeping): HookCommandRunner
  /** The session's workspace path as hooks and tools see it. */
  workspacePath(ref: SessionRef): string
}

/** Single-quotes a value for `sh`. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`

/**
 * The sandbox of every session on one runner: its built-in tools (exec_command, write_stdin,
 * read_file, write_file, apply_patch) and command hooks, run as `sh -c` in the session's
 * workspace with the `VT_*` variables set and the payload on stdin.
 */
export function sessionSandbox(config: SandboxConfig): SessionSandbox {
  const { runner, ...options } = config
  return {
    tools: (_ref, placement, allow, spool) =>
      sandboxToolHandlers({
        runner: allowed(placement ? placedRunner(runner, placement) : runner, allow),
        ...options,
        ...(spool ? { spool } : {}),
      }),
    isolate: async (ref, name) => {
      const made = await runner.createWorktree(
        { tenant: ref.tenant, sessionId: ref.sessionId },
        { name },
      )
      if (!made.ok) {
        throw new TurnlineError(
          'invalid_input',
          `cannot isolate in a worktree: ${made.refusal.message}`,
          {
            details: { code: made.refusal.code },
          },
        )
      }
      return { sessionId: ref.sessionId, baseDir: made.value.path }
    },
    workspacePath: () => '.',
    runCommand: (ref, allow, spool) => commandHookRunner(allowed(runner, allow), ref, spool),
  }
}

/** A runner whose starts carry what the session allows its commands (network). */
function allowed(runner: SandboxRunner, allow: CommandAllowance | undefined): SandboxRunner {
  if (!allow?.network) return runner
  return {
    start: (scope, request) => runner.start(scope, { ...request, network: true }),
    write: (scope, request) => runner.write(scope, request),
    poll: (scope, request) => runner.poll(scope, request),
    wait: (scope, request) => runner.wait(scope, request),
    close: (scope, id) => runner.close(scope, id),
    readSpool: (scope, request) => runner.readSpool(scope, request),
    readFile: (scope, request) => runner.readFile(scope, request),
    writeFile: (scope, request) => runner.writeFile(scope, request),
    applyPatch: (scope, patch) => runner.applyPatch(scope, patch),
    createWorktree: (scope, request) => runner.createWorktree(scope, request),
    eraseWorkspace: (scope) => runner.eraseWorkspace(scope),
  }
}

function commandHookRunner(
  runner: SandboxRunner,
  ref: SessionRef,
  spool: SpoolKeeping | undefined,
): HookCommandRunner {
  const scope = { tenant: ref.tenant, sessionId: ref.sessionId }
  return async (command, { stdin, env, timeoutMs }) => {
    const exports = Object.entries(env)
      .map(([name, value]) => `${name}=${quote(value)}`)
      .join(' ')
    const id = `hook-${crypto.randomUUID()}`
    const started = await runner.start(scope, {
      requestId: id,
      toolCallId: id,
      cmd: `env ${exports} sh -c ${quote(command)}`,
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 64 * 1024,
      // Its answer decides: kept where the session's other commands cannot rewrite it.
      privateOutput: true,
    })
    if (!started.ok) throw new Error(`hook command refused: ${started.refusal.message}`)
    const session = started.value.execSessionId
    // Refused only when the command closed its stdin or exited already: then it did not want it.
    await runner.write(scope, {
      execSessionId: session,
      chars: `${stdin}\u0004`,
      yieldTimeMs: 0,
      maxOutputBytes: 64,
    })
    const waited = await runner.wait(scope, {
      execSessionId: session,
      timeoutMs,
      maxOutputBytes: 64 * 1024,
    })
    if (!waited.ok) throw new Error(`hook command failed: ${waited.refusal.message}`)
    const { state } = waited.value
    if (state.status !== 'exited') {
      await runner.close(scope, session)
      throw new Error(
        state.status === 'lost'
          ? 'the runner lost the hook command'
          : `hook timed out after ${timeoutMs} ms`,
      )
    }
    const complete = waited.value.spool.complete
    try {
      return await hookAnswer(runner, scope, session, waited.value, state.exitCode, spool)
    } finally {
      // The answer is read: the runner removes the private spool. Not while a process the hook
      // left holds its output (a close would end it); a failed close leaves the file, no more.
      if (complete) await runner.close(scope, session).catch(() => undefined)
    }
  }
}

/** An exited hook's answer: its capture, or its whole spool kept as an artifact when long. */
async function hookAnswer(
  runner: SandboxRunner,
  scope: SandboxScope,
  session: string,
  waited: ExecSnapshot,
  exitCode: number,
  spool: SpoolKeeping | undefined,
): Promise<HookCommandResult> {
  const { output, totalOutputBytes } = waited
  const stdout = `${output.head}${output.tail}`
  if (!spool || totalOutputBytes <= spool.inlineBytes || !waited.spool.complete) {
    return { exitCode, stdout, stderr: '' }
  }
  const kept = await keepSpool(runner, scope, session, totalOutputBytes, spool.keeping)
  if (kept.kind !== 'artifact') throw new Error(`hook output not kept: ${kept.reason}`)
  return { exitCode, stdout, stderr: '', artifact: kept.artifact }
}

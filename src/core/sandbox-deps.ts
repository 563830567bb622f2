import { TurnlineError } from '../errors.ts'
import type { SandboxRunner } from '../ports/sandbox-runner.ts'
import type { SessionRef } from '../store/session-ref.ts'
import type { HookCommandRunner } from './hooks/command-hook.ts'
import { placedRunner } from './placed-runner.ts'
import { sandboxToolHandlers } from './sandbox-tool-handlers.ts'
import type { SandboxDeps } from './service-deps.ts'

/** Single-quotes a value for `sh`. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`

/**
 * The sandbox of every session on one runner: its built-in tools (exec_command, write_stdin,
 * read_file, write_file, apply_patch) and command hooks, run as `sh -c` in the session's
 * workspace with the `VT_*` variables set and the payload on stdin.
 */
export function sandboxDeps(
  runner: SandboxRunner,
  options: { ceilingSeconds?: number } = {},
): SandboxDeps {
  return {
    tools: (_ref, placement) =>
      sandboxToolHandlers({
        runner: placement ? placedRunner(runner, placement) : runner,
        ...options,
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
    runCommand: (ref) => commandHookRunner(runner, ref),
    runner,
  }
}

function commandHookRunner(runner: SandboxRunner, ref: SessionRef): HookCommandRunner {
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
    const { state, output } = waited.value
    if (state.status !== 'exited') {
      await runner.close(scope, session)
      throw new Error(
        state.status === 'lost'
          ? 'the runner lost the hook command'
          : `hook timed out after ${timeoutMs} ms`,
      )
    }
    return { exitCode: state.exitCode, stdout: `${output.head}${output.tail}`, stderr: '' }
  }
}

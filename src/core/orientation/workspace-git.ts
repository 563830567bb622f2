import type { SandboxRunner, SandboxScope } from '../../ports/sandbox-runner.ts'

/**
 * The recent git log of a workspace through the sandbox runner (VT Code runs
 * `git log --oneline -5 --no-decorate` in the workspace root): undefined when the workspace is
 * not a git repository, has no commits, or the runner cannot tell in time. A runner fault is
 * reported through `onError` and never stops the orient phase.
 *
 * The runner is asked first to read it from the workspace's `.git` without a process
 * (`recentCommits`: no sandbox launch on a turn that runs no command); only when it cannot tell
 * (or has no such operation) does the command run in the sandbox.
 */
export const GIT_LOG_COMMAND =
  'git rev-parse --is-inside-work-tree >/dev/null 2>&1 && git log --oneline -5 --no-decorate'

export async function recentGitLog(
  runner: SandboxRunner,
  scope: SandboxScope,
  requestId: string,
  onError: (message: string) => void,
  timeoutMs = 5000,
): Promise<string | undefined> {
  try {
    const read = await runner.recentCommits?.(scope, { count: 5 })
    if (read?.ok && read.value.state === 'none') return undefined
    if (read?.ok && read.value.state === 'log') return read.value.log.trim() || undefined
    const started = await runner.start(scope, {
      requestId,
      toolCallId: requestId,
      cmd: GIT_LOG_COMMAND,
      tty: false,
      yieldTimeMs: timeoutMs,
      maxOutputBytes: 16 * 1024,
    })
    if (!started.ok) {
      onError(`git log refused: ${started.refusal.message}`)
      return undefined
    }
    const { state, output } = started.value
    if (state.status !== 'exited') {
      await runner.close(scope, started.value.execSessionId).catch(() => undefined)
      if (state.status === 'running') onError(`git log did not finish within ${timeoutMs} ms`)
      return undefined
    }
    if (state.exitCode !== 0) return undefined
    const log = `${output.head}${output.tail}`.trim()
    return log === '' ? undefined : log
  } catch (error) {
    onError(`git log failed: ${error instanceof Error ? error.message : String(error)}`)
    return undefined
  }
}

import type { OutputArtifact } from '../contract/output-artifact.ts'

/**
 * What a command hook needs from a sandbox: run `sh -c <command>` in the project directory with
 * `stdin` and extra `env`, return its exit code and output. Adapt a SandboxRunner to this; the
 * runner should stop the command when `signal` aborts (the hook runner stops waiting at the
 * timeout either way).
 */
export type HookCommandRunner = (
  command: string,
  options: {
    stdin: string
    env: Readonly<Record<string, string>>
    timeoutMs: number
    signal: AbortSignal
  },
) => Promise<HookCommandResult>

export interface HookCommandResult {
  exitCode: number
  stdout: string
  stderr: string
  /**
   * Output over the inline limit, kept whole as an output artifact of the session (`stdout` is
   * then only its head and tail).
   */
  artifact?: OutputArtifact
}

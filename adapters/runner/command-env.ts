/**
 * The whole environment of a command: an explicit allow-list, never the runner's (or the
 * server's) own environment. Documented in docs/runner-protocol.md ("Environment").
 */

/** PATH of every command unless the operator passes the runner's own PATH on. */
export const COMMAND_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
/** The name commands see for their user (a passwd entry exists for it inside the sandbox). */
export const SANDBOX_USER = 'sandbox'

export interface CommandEnvInput {
  /** Real path of the workspace: HOME. */
  workspace: string
  cwd: string
  tty: boolean
  /** VTCODE_EXEC_SESSION_ID (absent for the runner's own helper commands such as git). */
  execSessionId?: string
  /** Names copied from `source` when set there (TURNLINE_SANDBOX_ENV). */
  passEnv: readonly string[]
  source: Readonly<Record<string, string | undefined>>
}

export function commandEnv(input: CommandEnvInput): Record<string, string> {
  const env: Record<string, string> = {
    PATH: COMMAND_PATH,
    HOME: input.workspace,
    PWD: input.cwd,
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    TERM: input.tty ? 'xterm-256color' : 'dumb',
    USER: SANDBOX_USER,
    LOGNAME: SANDBOX_USER,
    SHELL: '/bin/sh',
  }
  for (const name of input.passEnv) {
    const value = input.source[name]
    if (value !== undefined && !name.toUpperCase().startsWith('TURNLINE_')) env[name] = value
  }
  if (input.execSessionId) env.VTCODE_EXEC_SESSION_ID = input.execSessionId
  return env
}

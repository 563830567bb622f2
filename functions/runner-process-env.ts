/**
 * The embedded runner's environment: PATH (and TMPDIR) for node and the sandbox's tools, and the
 * variables TURNLINE_SANDBOX_ENV names, which commands are meant to get. Nothing else of the
 * server's environment — no key, no secret — so a runner made to read its own
 * `/proc/self/environ` finds nothing to steal.
 */
export function runnerProcessEnv(
  env: Readonly<Record<string, string | undefined>>,
  passEnv: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of ['PATH', 'TMPDIR', ...passEnv]) {
    const value = env[name]
    if (value !== undefined && value !== '' && !name.toUpperCase().startsWith('TURNLINE_'))
      out[name] = value
  }
  return out
}

/**
 * The environment the embedded runner will most likely be given, read from the variables as
 * they are, before anything is parsed (no schema is loaded yet): a Node entry spawns the runner's
 * process with it first (functions/entries/node.ts). It is a guess, checked later: the process
 * is used only when the parsed request asks for exactly this environment (embedded-runner.ts),
 * otherwise it is abandoned unconfigured, having run nothing. Undefined with a runner URL.
 */
export function runnerEnvAhead(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> | undefined {
  if (env.TURNLINE_RUNNER_URL) return undefined
  const names = (env.TURNLINE_SANDBOX_ENV ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
  return runnerProcessEnv(env, names)
}

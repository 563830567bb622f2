import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { CliError, EXIT } from './exit-codes.ts'

type Env = Readonly<Record<string, string | undefined>>

/** Where the embedded engine's sessions and commands go for one run of `turnline exec`. */
export interface ProjectChoice {
  /** The folder every session of the run works in (project mode), or undefined: sandbox folders. */
  project?: string
  /** The line said at start: which folder the agent may change. */
  line: string
}

/**
 * The sessions folder of the `turnline` command when TURNLINE_DATA_DIR is unset: one per user
 * (`$XDG_STATE_HOME/turnline`, else `~/.local/state/turnline`), never inside the project the
 * agent may change — a session log or the runner's state that the agent can rewrite would let
 * its commands tamper with what the engine (and a root runner) reads. Undefined without a home,
 * and for root: root's home is closed to the unprivileged user its sandboxed commands run as,
 * who must reach the runner's folder beside the sessions; root keeps `./.turnline`.
 */
export function userDataDir(env: Env): string | undefined {
  if (process.getuid?.() === 0) return undefined
  const state = env.XDG_STATE_HOME?.trim()
  if (state && path.isAbsolute(state)) return path.join(state, 'turnline')
  const home = env.HOME?.trim()
  return home && path.isAbsolute(home) ? path.join(home, '.local', 'state', 'turnline') : undefined
}

/** The embedded engine's environment: TURNLINE_DATA_DIR is the per-user folder when unset. */
export function embeddedEnv(env: Env): Record<string, string | undefined> {
  return { ...env, TURNLINE_DATA_DIR: env.TURNLINE_DATA_DIR ?? userDataDir(env) ?? '.turnline' }
}

/**
 * Project mode of the embedded engine: the sessions work in `dir` (default: the current
 * folder), which the sandbox binds as the one writable path. Not when the commands run on a
 * runner elsewhere (TURNLINE_RUNNER_URL keeps its own roots), nor when the runner is root and
 * the folder is root's (commands never run sandboxed as root, and the user's files are never
 * chowned): then each session gets a sandbox folder of its own, and the line says so. Refuses a
 * sessions folder or runner root inside the project. `env` is the engine's (`embeddedEnv`).
 */
export function chooseProject(dir: string | undefined, env: Env, cwd: string): ProjectChoice {
  const dataDir = env.TURNLINE_DATA_DIR ?? '.turnline'
  const project = existingFolder(path.resolve(cwd, dir ?? '.'))
  if (env.TURNLINE_RUNNER_URL?.trim()) {
    return {
      line: `turnline: commands run on the runner at TURNLINE_RUNNER_URL, in its own folders, not in ${project}`,
    }
  }
  const runnerRoot = path.resolve(
    cwd,
    env.TURNLINE_RUNNER_ROOT ?? `${path.resolve(cwd, dataDir)}-runner`,
  )
  const owner = statSync(project).uid
  if (process.getuid?.() === 0 && owner === 0 && env.TURNLINE_SANDBOX !== 'off') {
    return {
      line:
        `turnline: ${project} belongs to root and commands never run sandboxed as root, so the ` +
        `agent works in a sandbox folder of its own under ${runnerRoot}, not in ${project}; ` +
        "run turnline as the folder's owner to let it change the folder",
    }
  }
  const stateDirs: [string, string][] = [['TURNLINE_RUNNER_ROOT', runnerRoot]]
  if (!env.S3_BUCKET?.trim() && env.TURNLINE_STORE !== 'memory') {
    stateDirs.push(['TURNLINE_DATA_DIR', path.resolve(cwd, dataDir)])
  }
  for (const [name, folder] of stateDirs) {
    const real = realOrDeclared(folder)
    if (within(project, real) || within(real, project)) {
      throw new CliError(
        `turnline: ${name} (${folder}) and ${project}, the folder the agent may change, overlap: ` +
          `its commands could rewrite the engine's own files. Set ${name} to a folder outside it, ` +
          'or give the agent another folder with --cd DIR',
        EXIT.usage,
      )
    }
  }
  return {
    project,
    line: `turnline: the agent works in ${project} and may change files there (--cd DIR for another folder)`,
  }
}

function existingFolder(folder: string): string {
  let real: string
  try {
    real = realpathSync(folder)
  } catch {
    throw new CliError(`turnline: --cd: no folder ${folder}`, EXIT.usage)
  }
  if (!statSync(real).isDirectory()) {
    throw new CliError(`turnline: --cd: ${folder} is not a folder`, EXIT.usage)
  }
  return real
}

/** The real path of `folder`, or of its nearest existing parent with the rest appended. */
function realOrDeclared(folder: string): string {
  const missing: string[] = []
  let at = folder
  for (;;) {
    try {
      return path.join(realpathSync(at), ...missing.reverse())
    } catch {
      const parent = path.dirname(at)
      if (parent === at) return folder
      missing.push(path.basename(at))
      at = parent
    }
  }
}

function within(outer: string, inner: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith(path.sep) ? outer : outer + path.sep)
}

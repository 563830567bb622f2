import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * The runner's process before it has its settings (runner-child.ts hands them over): spawned on
 * its own, with nothing but Node's builtins imported, so that a server's entry can start it
 * before its own code loads (functions/entries/node.ts).
 */

export interface RunnerExit {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * A runner process that loads its code and waits for its settings on stdin
 * (`startRunnerChild` hands them over): started ahead, while the parent still works out what
 * they are, it loads meanwhile. Until it has them it runs nothing. `abandon()` ends its stdin,
 * and so the process, unconfigured.
 */
export interface RunnerProcess {
  child: ChildProcess
  /** The environment it was spawned with, its whole environment. */
  env: Readonly<Record<string, string>>
  exited: Promise<RunnerExit>
  abandon(): void
}

/**
 * node's arguments for the child program: from the sources (this module is a .ts file, run
 * through tsx or vitest) `child-main.ts` with tsx's loader; from a build (this code is bundled
 * into dist/node/server.mjs or dist/cli/main.mjs) the `runner-child.mjs` built beside it.
 */
function childArgs(): string[] {
  const here = import.meta.url
  if (here.endsWith('.ts')) {
    const tsx = pathToFileURL(createRequire(here).resolve('tsx')).href
    return ['--import', tsx, fileURLToPath(new URL('./child-main.ts', here))]
  }
  const built = fileURLToPath(new URL('./runner-child.mjs', here))
  if (!existsSync(built)) {
    throw new Error(`the runner's program ${built} is missing: run npm run build again`)
  }
  return ['--enable-source-maps', built]
}

/** Spawns the runner's program with exactly `env` for its environment (see RunnerProcess). */
export function spawnRunnerProcess(env: Record<string, string>): RunnerProcess {
  const child = spawn(process.execPath, childArgs(), {
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<RunnerExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  // A parent that outlives the pipe must not die of EPIPE; a failed spawn shows as no ready line.
  child.stdin?.on('error', () => {})
  child.on('error', () => {})
  return { child, env, exited, abandon: () => child.stdin?.end() }
}

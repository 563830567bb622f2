/**
 * A Turnline server as its own process, started the way a user starts it (`npm start` runs
 * `node infra/start.mjs`; the build runs `node dist/node/server.mjs`), with the default
 * configuration and only what the deployment must be told: where the model is, the tool
 * signing secret, the data folder and a free port. Its output goes to a log file, as a
 * supervisor would keep it; its process group is stopped with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface ServerProcess {
  url: string
  pid: number
  /** Everything it printed so far. */
  output(): string
  stop(): Promise<void>
}

const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
  }
})

/** Spawns `node <argv>` in `cwd` and waits for its `listening on <url>` line. */
export async function startServerProcess(options: {
  cwd: string
  argv: string[]
  env: Record<string, string>
  /** Folder for the data (TURNLINE_DATA_DIR = <dir>/data) and the log file. */
  dir: string
}): Promise<ServerProcess> {
  // The sandbox user must get through to the workspaces under the data folder.
  chmodSync(options.dir, 0o711)
  const logFile = join(options.dir, 'server.log')
  const log = openSync(logFile, 'w')
  const child = spawn(process.execPath, options.argv, {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      TURNLINE_DATA_DIR: join(options.dir, 'data'),
      ...options.env,
    },
    stdio: ['ignore', log, log],
    detached: true,
  })
  closeSync(log)
  running.add(child)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const output = () => readFileSync(logFile, 'utf8')
  const deadline = Date.now() + 60_000
  let url: string | undefined
  while (!url) {
    url = /listening on (http:\/\/\S+)/.exec(output())?.[1]
    if (url) break
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the server did not start:\n${output()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    url,
    pid: child.pid as number,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-(child.pid as number), 'SIGTERM')
        await exited
      }
      running.delete(child)
    },
  }
}

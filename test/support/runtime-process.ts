import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'

/** A runtime (workerd via wrangler, Deno) serving the app as a child process. */
export interface RuntimeProcess {
  url: string
  /** Everything the runtime printed so far (stdout and stderr, the last 64 KB). */
  output(): string
  /** Stops the whole process group: SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>
}

export interface RuntimeCommand {
  name: string
  command: string
  args: string[]
  env: Record<string, string>
  cwd: string
  port: number
  /** How long the runtime may take to answer GET /healthz. */
  readyTimeoutMs: number
}

const OUTPUT_LIMIT = 64 * 1024
const STOP_GRACE_MS = 3000
const running = new Set<ChildProcess>()

// A crashed or interrupted test run must not leave runtimes behind.
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL')
})

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // the group is already gone
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * Starts the command in its own process group and waits until GET /healthz answers 200.
 * Throws with the runtime's output when it exits early or is not up within the timeout.
 */
export async function startRuntime(spec: RuntimeCommand): Promise<RuntimeProcess> {
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let text = ''
  const collect = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-OUTPUT_LIMIT)
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  let spawnError: Error | undefined
  child.once('error', (error) => {
    spawnError = error
  })
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
  exited.then(() => running.delete(child))

  const stop = async () => {
    killGroup(child, 'SIGTERM')
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_GRACE_MS)
    await exited
    clearTimeout(timer)
    // Children of the leader (wrangler's workerd) may outlive it: end the group for sure.
    killGroup(child, 'SIGKILL')
  }

  const url = `http://127.0.0.1:${spec.port}`
  const deadline = Date.now() + spec.readyTimeoutMs
  const failure = async (why: string) => {
    await stop()
    return new Error(
      `${spec.name} did not come up: ${why}\n` +
        `command: ${spec.command} ${spec.args.join(' ')}\n` +
        `--- ${spec.name} output ---\n${text || '(none)'}`,
    )
  }
  for (;;) {
    if (spawnError) throw await failure(`cannot run it (${spawnError.message})`)
    if (child.exitCode !== null || child.signalCode !== null) {
      throw await failure(`it exited (code ${child.exitCode}, signal ${child.signalCode})`)
    }
    if (Date.now() > deadline) throw await failure(`no answer within ${spec.readyTimeoutMs} ms`)
    const answer = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      async (response) => ({ status: response.status, body: await response.text() }),
      () => undefined,
    )
    if (answer?.status === 200) break
    // It answers, but not healthy (a Worker whose configuration is rejected answers 500).
    if (answer) throw await failure(`GET /healthz answered ${answer.status}: ${answer.body}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { url, output: () => text, stop }
}

import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'

/** A runtime (workerd via wrangler, Deno) serving the app as a child process. */
export interface RuntimeProcess {
  url: string
  /** Everything the runtime printed so far (stdout and stderr, the last 64 KB). */
  output(): string
  /** Stops the whole process group: SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>
  /** A crash: SIGKILL to the whole process group, nothing flushed; resolves once it is gone. */
  crash(): Promise<void>
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
  /** The status of GET /healthz that means it is up (default 200). */
  readyStatus?: number
}

const OUTPUT_LIMIT = 64 * 1024
const STOP_GRACE_MS = 3000
/** Process groups started here and not yet stopped. */
const running = new Set<number>()

// A test process that ends without its afterAll must not leave runtimes behind.
process.once('exit', () => {
  for (const group of running) killGroup(group, 'SIGKILL')
})

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal)
  } catch {
    // the group is already gone
  }
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

class StartFailure extends Error {}

/** One GET; undefined when nothing answers (yet), or the answer does not arrive in time. */
async function probe(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) })
    return { status: response.status, body: await response.text() }
  } catch {
    return undefined
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
 * Starts the command in its own process group and waits until GET /healthz answers 200 (or
 * `readyStatus`).
 * Throws with the runtime's output when it exits early or is not up within the timeout.
 */
export async function startRuntime(spec: RuntimeCommand): Promise<RuntimeProcess> {
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const group = child.pid
  if (group !== undefined) running.add(group)
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
    if (!isRunning(child)) resolve()
    else child.once('exit', () => resolve())
  })

  const stop = async () => {
    if (group === undefined) return
    if (isRunning(child)) {
      killGroup(group, 'SIGTERM')
      const timer = setTimeout(() => killGroup(group, 'SIGKILL'), STOP_GRACE_MS)
      await exited
      clearTimeout(timer)
    }
    // Children of the leader (wrangler's workerd) may outlive it: end the group for sure.
    killGroup(group, 'SIGKILL')
    running.delete(group)
  }

  const url = `http://127.0.0.1:${spec.port}`
  const deadline = Date.now() + spec.readyTimeoutMs
  try {
    for (;;) {
      if (spawnError) throw new StartFailure(`cannot run it (${spawnError.message})`)
      if (!isRunning(child)) {
        throw new StartFailure(`it exited (code ${child.exitCode}, signal ${child.signalCode})`)
      }
      if (Date.now() > deadline) {
        throw new StartFailure(`no answer within ${spec.readyTimeoutMs} ms`)
      }
      const answer = await probe(`${url}/healthz`)
      if (answer?.status === (spec.readyStatus ?? 200)) break
      // It answers, but not healthy (a Worker whose configuration is rejected answers 500).
      if (answer) throw new StartFailure(`GET /healthz answered ${answer.status}: ${answer.body}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } catch (error) {
    // Whatever went wrong, nothing started here outlives the attempt.
    await stop()
    const why = error instanceof StartFailure ? error.message : `the wait failed: ${String(error)}`
    throw new Error(
      `${spec.name} did not come up: ${why}\n` +
        `command: ${spec.command} ${spec.args.join(' ')}\n` +
        `--- ${spec.name} output ---\n${text || '(none)'}`,
    )
  }
  const crash = async () => {
    if (group === undefined) return
    killGroup(group, 'SIGKILL')
    await exited
    running.delete(group)
  }
  return { url, output: () => text, stop, crash }
}

import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cmdlineOf, descendantsOf } from './proc-tree.ts'

const repo = join(import.meta.dirname, '..', '..')
const running = new Set<number>()

// An interrupted test run must not leave runners behind.
process.once('exit', () => {
  for (const group of running) signalGroup(group, 'SIGKILL')
})

function signalGroup(group: number, signal: NodeJS.Signals) {
  try {
    process.kill(-group, signal)
  } catch {
    // gone already
  }
}

/** Extra stdio entries placing `fd` at number `at` in the child (the ones between: none). */
function inherited(inherit: { fd: number; at: number } | undefined): ('ignore' | number)[] {
  if (!inherit) return []
  return [...Array.from({ length: inherit.at - 3 }, () => 'ignore' as const), inherit.fd]
}

export interface RunnerProcess {
  url: string
  /** What it printed (stdout and stderr). */
  output(): string
  /** SIGTERM (the runner ends its commands), SIGKILL after a grace period. */
  stop(): Promise<void>
  /** SIGKILL at once: a crash. Commands it started keep running in their own groups. */
  crash(): Promise<void>
  /** The descriptors the runner's own node process holds open now. */
  openDescriptors(): number
  /** The most memory the runner's own node process has held so far, bytes (VmHWM). */
  peakMemoryBytes(): number
}

/**
 * The reference runner as a real process (`tsx adapters/runner/main.ts`) on 127.0.0.1:0. Its
 * commands run in the bubblewrap sandbox, required (`TURNLINE_SANDBOX=require`): a machine
 * where it does not work fails the tests loudly instead of testing something else.
 */
export async function startRunnerProcess(options: {
  root: string
  secret: string
  callbackUrl?: string
  port?: number
  /** More TURNLINE_SANDBOX_* settings (or another TURNLINE_SANDBOX mode). */
  env?: Record<string, string>
  /**
   * A descriptor of this process the runner inherits at number `at` (without close-on-exec), as
   * from a job runner or a supervisor that leaks one.
   */
  inherit?: { fd: number; at: number }
  /** The checkout whose runner to start (a bench's earlier revision); this one by default. */
  checkout?: string
}): Promise<RunnerProcess> {
  const args = [
    'adapters/runner/main.ts',
    '--root',
    options.root,
    '--port',
    String(options.port ?? 0),
  ]
  if (options.callbackUrl) args.push('--callback-url', options.callbackUrl)
  const cwd = options.checkout ?? repo
  const child: ChildProcess = spawn(join(cwd, 'node_modules/.bin/tsx'), args, {
    cwd,
    env: {
      ...process.env,
      TURNLINE_RUNNER_SECRET: options.secret,
      TURNLINE_SANDBOX: 'require',
      ...options.env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', ...inherited(options.inherit)],
  })
  const group = child.pid!
  running.add(group)
  let text = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      signalGroup(group, signal)
      const timer = setTimeout(() => signalGroup(group, 'SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }
    running.delete(group)
  }
  const deadline = Date.now() + 20_000
  for (;;) {
    const match = /\{"listening":"([^"]+)"/.exec(text)
    if (match?.[1])
      return {
        url: match[1],
        output: () => text,
        stop: () => end('SIGTERM'),
        crash: () => end('SIGKILL'),
        openDescriptors: () => readdirSync(`/proc/${runnerPid(group)}/fd`).length,
        peakMemoryBytes: () => {
          const status = readFileSync(`/proc/${runnerPid(group)}/status`, 'utf8')
          return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024
        },
      }
    if (child.exitCode !== null || Date.now() > deadline) {
      await end('SIGKILL')
      throw new Error(`the runner did not start:\n${text}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The node process running the runner: below tsx's launcher, the one with tsx's loader. */
function runnerPid(launcher: number): number {
  const own = [launcher, ...descendantsOf(launcher)].filter((pid) => {
    const line = cmdlineOf(pid)
    return line.includes('adapters/runner/main.ts') && line.includes('tsx/dist/loader')
  })
  if (own.length !== 1) throw new Error(`no single runner process below ${launcher}: ${own}`)
  return own[0] as number
}

import type { ChildProcess } from 'node:child_process'
import type { EgressStatus } from './command-networks.ts'
import type { SandboxStatus } from './command-sandbox.ts'
import {
  RunnerChildAnswerSchema,
  type RunnerChildConfig,
  RunnerChildEgressSchema,
} from './runner-child-protocol.ts'
import { type RunnerExit, type RunnerProcess, spawnRunnerProcess } from './runner-process.ts'
import { SandboxUnavailable } from './sandbox-probe.ts'
import type { SandboxSettings } from './sandbox-settings.ts'

export interface RunnerChildOptions {
  /** Folder of the workspaces. */
  root: string
  secret: string
  callbackUrl?: string
  sandbox: SandboxSettings
  /** The child's whole environment (functions/runner-process-env.ts), never the parent's. */
  env: Record<string, string>
  /** Project mode: this folder is every session's workspace (runner-server.ts). */
  project?: string
  /** Tenants the runner sets up once it has answered, before their first request. */
  prepareTenants?: string[]
  /** The least level of its log lines on stderr: `info` (every line, the default) or `warn`. */
  logLevel?: 'info' | 'warn'
  /** How long the start (with its sandbox probe) may take; default 60 s. */
  readyTimeoutMs?: number
}

export interface RunnerChild {
  pid: number
  url: string
  sandbox: SandboxStatus
  /**
   * How its commands allowed the network reach it, once its egress probe has ended (after it
   * answered ready: its commands allowed the network wait for it there, runner-child-protocol.ts).
   */
  egress: Promise<EgressStatus>
  /** Resolves once the process has exited, however. */
  exited: Promise<RunnerExit>
  /** SIGTERM (the runner ends its commands, then exits); SIGKILL if it has not after a grace. */
  close(): Promise<void>
}

/** How long a runner may take to end its commands (SIGTERM, 2 s, SIGKILL) and exit. */
const STOP_GRACE_MS = 10_000

/**
 * Starts the reference runner as a child process (`child-main.ts`) with exactly `env` for its
 * environment (or takes the process `spawned` ahead with that environment), hands it its settings
 * and secret on stdin and waits for its ready line (its egress status may follow on the next).
 * Rejects
 * with SandboxUnavailable when a sandbox is required and does not work, and with an Error when
 * it fails otherwise. The child's stderr is this process's; its stdin stays open for its
 * life: when this process exits, however, the child sees it end and stops with its commands.
 */
export async function startRunnerChild(
  options: RunnerChildOptions,
  spawned: RunnerProcess = spawnRunnerProcess(options.env),
): Promise<RunnerChild> {
  const { child, exited } = spawned
  const config: RunnerChildConfig = {
    root: options.root,
    secret: options.secret,
    sandbox: options.sandbox,
    ...(options.callbackUrl ? { callback_url: options.callbackUrl } : {}),
    ...(options.project ? { project: options.project } : {}),
    ...(options.prepareTenants?.length ? { prepare_tenants: options.prepareTenants } : {}),
    ...(options.logLevel ? { log_level: options.logLevel } : {}),
  }
  child.stdin?.write(`${JSON.stringify(config)}\n`)
  // The answer's parser — zod's, with the schemas it is made of, built at their first parse — is
  // made while the child loads its code and probes its sandbox rather than once its answer has
  // come, where it held a server's start ≈ 10 ms (docs/performance.md, cold start). The value it
  // parses is no answer and its outcome is dropped.
  setImmediate(() => RunnerChildAnswerSchema.safeParse({}))

  const close = stopper(child, exited)
  const nextLine = stdoutLines(child)
  let line: string
  try {
    line = await readyLine(nextLine, child, exited, options.readyTimeoutMs ?? 60_000)
  } catch (error) {
    await close()
    throw error
  }
  const answer = RunnerChildAnswerSchema.safeParse(parseJson(line))
  if (!answer.success) {
    await close()
    throw new Error(`the runner process answered ${JSON.stringify(line.slice(0, 200))}`)
  }
  if ('error' in answer.data) {
    await close()
    const { code, message } = answer.data.error
    throw code === 'sandbox_unavailable' ? new SandboxUnavailable(message) : new Error(message)
  }
  const { egress } = answer.data
  return {
    pid: answer.data.pid,
    url: answer.data.listening,
    sandbox: answer.data.sandbox,
    egress: egress !== undefined ? Promise.resolve(egress) : nextLine().then(egressOf),
    exited,
    close,
  }
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

/** The egress status on the line after the ready line; none, and why, when it is not there. */
function egressOf(line: string | undefined): EgressStatus {
  if (line === undefined) {
    return { mode: 'none', reason: 'the runner process ended before its egress probe did' }
  }
  const parsed = RunnerChildEgressSchema.safeParse(parseJson(line))
  if (parsed.success) return parsed.data.egress
  return {
    mode: 'none',
    reason: `the runner process answered ${JSON.stringify(line.slice(0, 200))}`,
  }
}

/**
 * The child's stdout, one line per call (undefined once it has ended). It is read from now on,
 * whether or not anyone asks, so that the child never blocks on it.
 */
function stdoutLines(child: ChildProcess): () => Promise<string | undefined> {
  let text = ''
  let ended = false
  const waiting: ((line: string | undefined) => void)[] = []
  const hand = () => {
    for (let reader = waiting[0]; reader !== undefined; reader = waiting[0]) {
      const end = text.indexOf('\n')
      if (end < 0 && !ended) return
      waiting.shift()
      if (end < 0) reader(undefined)
      else {
        reader(text.slice(0, end))
        text = text.slice(end + 1)
      }
    }
  }
  child.stdout?.setEncoding('utf8')
  child.stdout?.on('data', (chunk: string) => {
    text += chunk
    hand()
  })
  // stdout ends when the process does (after its last line has been read).
  child.stdout?.once('end', () => {
    ended = true
    hand()
  })
  if (!child.stdout) ended = true
  return () =>
    new Promise((resolve) => {
      waiting.push(resolve)
      hand()
    })
}

function readyLine(
  nextLine: () => Promise<string | undefined>,
  child: ChildProcess,
  exited: Promise<RunnerExit>,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the runner process did not start within ${timeoutMs} ms`)),
      timeoutMs,
    )
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    void nextLine().then((line) => {
      if (line !== undefined) {
        clearTimeout(timer)
        resolve(line)
        return
      }
      void exited.then(({ code, signal }) => {
        clearTimeout(timer)
        reject(
          new Error(`the runner process exited (${signal ?? `code ${code}`}) before it was ready`),
        )
      })
    })
  })
}

function stopper(child: ChildProcess, exited: Promise<RunnerExit>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
      await exited
      clearTimeout(timer)
    })()
    return closing
  }
}

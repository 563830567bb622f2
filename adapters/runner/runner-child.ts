import type { ChildProcess } from 'node:child_process'
import type { EgressStatus } from './command-networks.ts'
import type { SandboxStatus } from './command-sandbox.ts'
import { RunnerChildAnswerSchema, type RunnerChildConfig } from './runner-child-protocol.ts'
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
  /** How long the start (with its sandbox probe) may take; default 60 s. */
  readyTimeoutMs?: number
}

export interface RunnerChild {
  pid: number
  url: string
  sandbox: SandboxStatus
  egress: EgressStatus
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
 * and secret on stdin and waits for its ready line. Rejects
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
  }
  child.stdin?.write(`${JSON.stringify(config)}\n`)

  const close = stopper(child, exited)
  let line: string
  try {
    line = await readyLine(child, exited, options.readyTimeoutMs ?? 60_000)
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
  // Nothing more is expected on stdout; keep it drained so the child never blocks on it.
  child.stdout?.resume()
  return {
    pid: answer.data.pid,
    url: answer.data.listening,
    sandbox: answer.data.sandbox,
    egress: answer.data.egress,
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

function readyLine(
  child: ChildProcess,
  exited: Promise<RunnerExit>,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(
      () => reject(new Error(`the runner process did not start within ${timeoutMs} ms`)),
      timeoutMs,
    )
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8')
      const end = text.indexOf('\n')
      if (end < 0) return
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      resolve(text.slice(0, end))
    }
    child.stdout?.on('data', onData)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // stdout ends when the process does (after its last line has been read).
    child.stdout?.once('end', () => {
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

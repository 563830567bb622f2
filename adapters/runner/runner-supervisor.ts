import { backoffMs } from '../../src/shared/backoff.ts'
import type { EgressStatus } from './command-networks.ts'
import type { SandboxStatus } from './command-sandbox.ts'
import { type RunnerChild, type RunnerChildOptions, startRunnerChild } from './runner-child.ts'
import type { RunnerExit, RunnerProcess } from './runner-process.ts'

export interface SupervisorOptions extends RunnerChildOptions {
  /** Loud lines for the operator (a death, a restart, giving up), without a prefix. */
  report: (line: string) => void
  /** Called once when the runner cannot be kept running; default: nothing more. */
  onGiveUp?: (why: string) => void
  /** Deaths within RESTART_WINDOW_MS after which it is not restarted again (default 5). */
  maxDeaths?: number
  /** Wait before the first restart, doubling per death in the window (default 500 ms). */
  backoffMs?: number
}

export interface SupervisedRunner {
  /** The current child's URL: a restarted child listens on a new port. */
  url(): string
  /** The current child's process id (operators find its /proc entry with it). */
  pid(): number
  sandbox: SandboxStatus
  /** The first child's egress status, once its egress probe has ended (runner-child.ts). */
  egress: Promise<EgressStatus>
  /** Stops the child (it ends its commands) and restarts no more. */
  close(): Promise<void>
}

const RESTART_WINDOW_MS = 60_000
const MAX_BACKOFF_MS = 10_000

function how(exit: RunnerExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`
}

/**
 * The reference runner as a child process that is restarted when it dies: each death is
 * reported, a new child (same secret and settings, a new port: `url()` follows it) is started
 * after a backoff, and after `maxDeaths` deaths within a minute — or a restart that fails —
 * it gives up (`onGiveUp`). A restarted runner finds the commands of the dead one `lost`
 * (docs/runner-protocol.md). The first start's failure is the caller's: it rejects. `spawned`:
 * the first child's process, spawned ahead (runner-process.ts, spawnRunnerProcess).
 */
export async function superviseRunner(
  options: SupervisorOptions,
  spawned?: RunnerProcess,
): Promise<SupervisedRunner> {
  const maxDeaths = options.maxDeaths ?? 5
  const firstDelayMs = options.backoffMs ?? 500
  let current: RunnerChild = await startRunnerChild(options, spawned)
  let closed = false
  let gaveUp = false
  const deaths: number[] = []

  const giveUp = (why: string) => {
    if (gaveUp) return
    gaveUp = true
    options.report(`the sandbox runner is not restarted again: ${why}; commands fail until restart`)
    options.onGiveUp?.(why)
  }

  const watch = (child: RunnerChild) => {
    void child.exited.then(async (exit) => {
      if (closed || child !== current) return
      const now = Date.now()
      deaths.push(now)
      while ((deaths[0] ?? now) < now - RESTART_WINDOW_MS) deaths.shift()
      if (deaths.length >= maxDeaths) {
        options.report(`the sandbox runner (pid ${child.pid}) died (${how(exit)})`)
        giveUp(`it died ${deaths.length} times within ${RESTART_WINDOW_MS / 1000} s`)
        return
      }
      const delay = backoffMs(deaths.length - 1, {
        firstMs: firstDelayMs,
        maxMs: MAX_BACKOFF_MS,
        jitter: 'none',
      })
      options.report(
        `the sandbox runner (pid ${child.pid}) died (${how(exit)}); its running commands are ` +
          `lost; restarting it in ${delay} ms`,
      )
      await new Promise((resolve) => setTimeout(resolve, delay))
      if (closed) return
      try {
        const next = await startRunnerChild(options)
        if (closed) {
          await next.close()
          return
        }
        current = next
        options.report(`the sandbox runner restarted: pid ${next.pid}, ${next.url}`)
        watch(next)
      } catch (error) {
        giveUp(`its restart failed: ${error instanceof Error ? error.message : String(error)}`)
      }
    })
  }
  watch(current)

  return {
    url: () => current.url,
    pid: () => current.pid,
    sandbox: current.sandbox,
    egress: current.egress,
    close: async () => {
      closed = true
      await current.close()
    },
  }
}

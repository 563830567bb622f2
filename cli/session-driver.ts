import { randomUUID } from 'node:crypto'
import { TurnlineApiError } from '../client/errors.ts'
import type { TurnRequest } from '../client/requests.ts'
import type { TurnlineClient } from '../client/turnline-client.ts'
import { type TurnStatus, turnEvents } from '../client/types.ts'
import type { LimitsChange } from '../src/contract/api.ts'
import { CliError, EXIT } from './exit-codes.ts'
import type { Progress } from './progress.ts'
import type { RunOutput } from './run-output.ts'

/** Longest pause before asking a busy session again, whatever Retry-After says. */
const MAX_BUSY_WAIT_MS = 5000
/** Pauses between looks at a turn that waits on a command: 0.5 s, doubling up to 5 s. */
const FIRST_WAIT_PAUSE_MS = 500
const MAX_WAIT_PAUSE_MS = 5000
/** Cancel requests before giving up on a turn that does not stop (about a minute). */
const CANCEL_ATTEMPTS = 120
/** How long a step waits on a session another request keeps busy (`--busy-timeout`): 10 minutes. */
export const DEFAULT_BUSY_TIMEOUT_MS = 600_000

/**
 * Steps one session the way a person at a terminal would: one turn with the prompt, then — while
 * the turn answers `waiting` (a sandbox command outlived one invocation) — further turns without
 * input that continue it, until the turn ends. A busy session (another invocation continues it,
 * e.g. the runner's exit callback on a server) is asked again after its Retry-After, showing
 * whatever that invocation committed meanwhile, for at most `busyTimeoutMs` in a row: past it
 * the step fails with a CliError (exit 7) naming the session and `--busy-timeout`.
 */
export class SessionDriver {
  constructor(
    private readonly client: TurnlineClient,
    private readonly output: RunOutput,
    private readonly progress: Progress | undefined,
    private readonly stopped: () => boolean,
    private readonly busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS,
  ) {}

  /** Runs the turn to its end (not `waiting`); answers how it ended. */
  async run(
    sessionId: string,
    input: string | undefined,
    limits?: LimitsChange,
  ): Promise<TurnStatus> {
    let status = await this.step(sessionId, {
      ...(input === undefined ? {} : { input }),
      ...(limits ? { limits } : {}),
    })
    let pause = FIRST_WAIT_PAUSE_MS
    while (status === 'waiting' && !this.stopped()) {
      this.progress?.waiting()
      // A wait longer than one invocation's budget is not blocked on: each continuation looks
      // once and answers `waiting` again, so the looks are spaced out (and each commits little).
      await this.pause(pause)
      pause = Math.min(pause * 2, MAX_WAIT_PAUSE_MS)
      if (this.stopped()) break
      status = await this.step(sessionId, {})
    }
    return status
  }

  /** Sleeps, waking early when the run is stopped (Ctrl-C). */
  private async pause(ms: number): Promise<void> {
    const until = Date.now() + ms
    while (Date.now() < until && !this.stopped()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, until - Date.now())))
    }
  }

  /** Ends the session with success (or, honestly, with the failure of its last turn). */
  async complete(sessionId: string): Promise<void> {
    await this.client.complete(sessionId, { onEvent: (event) => this.output.accept(event) })
    await this.output.catchUp()
  }

  /**
   * Ends the session `cancelled` for sure: a cancel that finds a turn running only flags it (the
   * turn stops at its next model event, or comes back `waiting` from a tool wait), so it is
   * repeated until `thread.completed` is in.
   */
  async cancel(sessionId: string): Promise<void> {
    for (let attempt = 0; attempt < CANCEL_ATTEMPTS; attempt++) {
      await this.output.catchUp()
      if (this.output.completed) return
      try {
        const answer = await this.client.cancel(sessionId, {
          onEvent: (event) => this.output.accept(event),
        })
        for (const event of turnEvents(answer)) await this.output.accept(event)
        if (answer.status === 'terminal') return
      } catch (error) {
        if (!(error instanceof TurnlineApiError)) throw error
        if (error.code === 'session_completed') return
        if (error.code !== 'session_busy') throw error
      }
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }

  private async step(sessionId: string, body: TurnRequest): Promise<TurnStatus> {
    // One key per step: a retry after session_busy cannot run the same turn twice.
    const key = `turnline-cli-${randomUUID()}`
    let busySince: number | undefined
    for (;;) {
      try {
        const answer = await this.client.stepTurn(sessionId, body, {
          idempotencyKey: key,
          onEvent: (event) => this.output.accept(event),
        })
        for (const event of turnEvents(answer)) await this.output.accept(event)
        for (const warning of answer.warnings ?? []) this.progress?.warn(warning)
        return answer.status
      } catch (error) {
        if (!(error instanceof TurnlineApiError)) throw error
        if (error.code === 'session_busy') {
          if (busySince === undefined) {
            busySince = Date.now()
            this.progress?.note(
              `session ${sessionId} is busy: another request runs a turn on it; waiting up to ${this.busyTimeoutMs / 1000} s (--busy-timeout)`,
            )
          }
          const left = busySince + this.busyTimeoutMs - Date.now()
          if (left <= 0) throw busyTooLong(sessionId, this.busyTimeoutMs)
          const ms = Math.min((error.retryAfterSeconds ?? 1) * 1000, MAX_BUSY_WAIT_MS, left)
          await new Promise((resolve) => setTimeout(resolve, Math.max(ms, 200)))
          await this.output.catchUp()
          if (this.output.lastTurnEnd === 'terminal') return 'terminal'
          continue
        }
        // Nothing left to continue: another invocation finished the turn (a runner callback).
        if (error.code === 'invalid_input' && body.input === undefined) {
          await this.output.catchUp()
          const end = this.output.lastTurnEnd
          if (end) return end
        }
        if (error.code === 'session_completed') {
          await this.output.catchUp()
          return 'terminal'
        }
        throw error
      }
    }
  }
}

function busyTooLong(sessionId: string, busyTimeoutMs: number): CliError {
  return new CliError(
    `turnline exec: session ${sessionId} is still busy after ${busyTimeoutMs / 1000} s: another request runs a turn on it. Run \`turnline exec resume ${sessionId}\` once that turn ended, or wait longer with --busy-timeout SECONDS`,
    EXIT.unavailable,
  )
}

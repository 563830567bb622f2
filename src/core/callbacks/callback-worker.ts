import type { TimerClock } from '../../ports/clock.ts'
import type { SessionStore } from '../../store/session-store.ts'
import type { CallbackContext } from './callback-sender.ts'
import { type SweepResult, sweepCallbacks } from './callback-sweep.ts'

/**
 * The delivery loop of a long-running server (Node): sweeps the outbox when woken (notices just
 * recorded), when the earliest pending delivery is due, and at least every `intervalMs` (what
 * other instances recorded, what a dead instance left). One sweep at a time; a wake during a
 * sweep runs another right after it.
 */
export class CallbackWorker {
  private running: Promise<void> | undefined
  private again = false
  private cancelTimer: (() => void) | undefined
  private stopped = false
  private readonly listeners = new Set<(result: SweepResult) => void>()

  constructor(
    private readonly ctx: CallbackContext & { clock: TimerClock },
    private readonly sessions: SessionStore,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.stopped = false
    this.wake()
  }

  stop(): void {
    this.stopped = true
    this.cancelTimer?.()
  }

  /** Called after every sweep (tests wait on it). */
  onSweep(listener: (result: SweepResult) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly wake = (): void => {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.cancelTimer?.()
    this.running = this.pass().finally(() => {
      this.running = undefined
      if (this.again) {
        this.again = false
        this.wake()
      }
    })
  }

  private async pass(): Promise<void> {
    const now = this.ctx.clock.now()
    let next = now + this.intervalMs
    try {
      const result = await sweepCallbacks(this.ctx, this.sessions)
      if (result.nextDueAt !== undefined) next = Math.min(next, result.nextDueAt)
      for (const listener of this.listeners) listener(result)
    } catch (error) {
      this.ctx.log({ level: 'warn', msg: 'callback sweep failed', error: String(error) })
    }
    if (this.stopped) return
    // Never a busy loop: a claim another instance holds, a batch that failed, is looked at
    // again after the first retry step at the earliest.
    const floor = Math.min(this.ctx.policy.retry.firstMs, 1000)
    const delay = Math.max(floor, next - this.ctx.clock.now())
    this.cancelTimer = this.ctx.clock.setTimer(delay, this.wake)
  }
}

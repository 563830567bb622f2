import { callbacksBell, type WorkBell, workBell } from '../../src/contract/work-bell.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { WorkTrigger } from './background-worker.ts'

/** Sends one bell to the platform's queue, visible after `delaySeconds` (0: at once). */
export type SendBell = (bell: WorkBell, delaySeconds: number) => Promise<void>

/**
 * The bells of a runtime whose background work runs from a queue (Lambda: SQS): routes ring one
 * for each record they wrote (`wake`), the callbacks' outbox one after each commit with notices
 * (`ringCallbacks`). A send is not awaited where it is rung — the route answers its 202 — but an
 * invocation must not end before its sends did (a frozen function may never finish them), so the
 * entry awaits `settled()` before it returns. A send that fails is logged and lost, which costs
 * only time: the record is in the store, and the periodic sweep rings for it again.
 */
export class QueueBells implements WorkTrigger {
  private readonly pending = new Set<Promise<void>>()
  private callbacksRung = false

  constructor(
    private readonly send: SendBell,
    private readonly log: (entry: Record<string, unknown>) => void,
  ) {}

  wake(at: WorkLocation): void {
    this.ring(workBell(at))
  }

  /** One outbox bell per invocation is enough: its pass delivers everything that is due. */
  readonly ringCallbacks = (): void => {
    if (this.callbacksRung) return
    this.callbacksRung = true
    this.ring(callbacksBell())
  }

  ring(bell: WorkBell, delaySeconds = 0): void {
    const sent = this.send(bell, delaySeconds).catch((error: unknown) => {
      this.log({
        level: 'warn',
        msg: 'queue bell not sent (the sweep finds the work)',
        kind: bell.kind,
        ...(bell.work ? { work: bell.work.work_id, session: bell.work.session_id } : {}),
        error: String(error),
      })
    })
    this.pending.add(sent)
    void sent.finally(() => this.pending.delete(sent))
  }

  /** Resolves once every bell rung so far (and any rung meanwhile) was sent or given up. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
    this.callbacksRung = false
  }
}

import type { TriggerMessage } from '../../src/contract/trigger-message.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { SessionApi, WorkRunOutcome } from '../../src/core/session-api.ts'

/**
 * What the platform does with a delivered message — done with it, or deliver it again later —
 * and what the delivery came to (for the log line): the run's outcome, `callbacks` for an
 * outbox pass, `fault` when the run or the pass threw.
 */
export type Settlement = ({ settle: 'ack' } | { settle: 'retry'; delayMs: number }) & {
  outcome: WorkRunOutcome['outcome'] | 'callbacks' | 'fault'
}

export interface TriggerDeliveryOptions {
  api: Pick<SessionApi, 'runWork'>
  /** Rings the bell for a loop run's next step (a new message). Never rejects. */
  wake: (at: WorkLocation) => void | Promise<void>
  /** One pass over the completion callbacks' outbox (the `callbacks` message). */
  callbacks: () => Promise<void>
  /**
   * The longest delay a message is put back for: at most what the platform allows, and best
   * no longer than the sweep's period. Work that must wait longer (the tenant's quota) is
   * acknowledged and left to the sweep, which finds it again — a sweep sends every pending
   * record, so a message put back for the whole of a long wait would be joined by another at
   * every sweep.
   */
  maxDelayMs: number
  log: (entry: Record<string, unknown>) => void
}

/** Pause before delivery `attempt + 1` of a message whose run failed: 2 s, 4 s, … */
export function retryDelayMs(attempt: number, maxDelayMs: number): number {
  return Math.min(maxDelayMs, 1000 * 2 ** Math.min(Math.max(attempt, 1), 20))
}

/**
 * Handles one trigger message of a platform queue (a Cloudflare Queue's consumer, Lambda's SQS
 * event source) through the same `runWork` the Node worker calls, and says how to settle it. A
 * second delivery of the same message finds the record gone (acknowledged), or its session
 * leased by the first (`busy`: delivered again when the lease says), or replays the committed
 * outcome by the record's idempotency key — nothing runs twice. `attempt` counts the deliveries
 * of this message, from 1.
 */
export async function deliverTrigger(
  message: TriggerMessage,
  attempt: number,
  options: TriggerDeliveryOptions,
): Promise<Settlement> {
  const again = { settle: 'retry' as const, delayMs: retryDelayMs(attempt, options.maxDelayMs) }
  const failed = (error: unknown, fields: Record<string, unknown>): Settlement => {
    options.log({ level: 'warn', ...fields, attempt, error: String(error) })
    return { ...again, outcome: 'fault' }
  }
  if (message.kind === 'callbacks') {
    try {
      await options.callbacks()
      return { settle: 'ack', outcome: 'callbacks' }
    } catch (error) {
      return failed(error, { msg: 'callback pass failed' })
    }
  }
  const at: WorkLocation = {
    tenant: message.tenant,
    session_id: message.session_id,
    work_id: message.work_id,
  }
  try {
    const result = await options.api.runWork(at)
    const { outcome } = result
    switch (outcome) {
      case 'done':
        if (result.next) await options.wake(result.next)
        return { settle: 'ack', outcome }
      case 'busy':
        return result.retryAfterMs <= options.maxDelayMs
          ? { settle: 'retry', delayMs: result.retryAfterMs, outcome }
          : { settle: 'ack', outcome }
      case 'retry':
        options.log({
          level: 'warn',
          msg: 'background run failed',
          work: at.work_id,
          session: at.session_id,
          attempt,
          code: result.error.code,
          error: result.error.message,
        })
        return { ...again, outcome }
      default:
        return { settle: 'ack', outcome }
    }
  } catch (error) {
    // The record could not be read or updated (the store is down): delivered again later.
    return failed(error, { msg: 'background run failed', work: at.work_id, session: at.session_id })
  }
}

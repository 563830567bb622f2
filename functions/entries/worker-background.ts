import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import { deliverTrigger } from '../background/trigger-delivery.ts'
import { sweepWork } from '../background/work-sweep.ts'
import type { Deps } from '../deps.ts'
import { loggedSessionApi } from '../http/turn-log.ts'
import type { EntryApp } from './entry-app.ts'
import { scheduledCallbacks } from './scheduled-callbacks.ts'
import {
  type QueueMessage,
  QueueTrigger,
  queueProducerOf,
  REDELIVERY_MAX_MS,
  readQueueMessage,
} from './worker-queue.ts'

type Log = (entry: Record<string, unknown>) => void

/** One operator log line in the Worker's log: `level` `info` unless the entry says. */
export const workerLog: Log = (entry) => console.log(operatorLogLine(entry, { level: 'info' }))

/**
 * The Worker's trigger, when the work queue is bound (wrangler.toml `[[queues.producers]]`):
 * routes record background work and send its message before they answer 202, and notices of
 * completion callbacks are followed by a `callbacks` message right after their commit, so they
 * go out at once rather than at the next cron trigger. Without the binding: none, and the
 * Worker runs everything in the request as before.
 */
export function workerTrigger(bindings: unknown, deps: Deps): QueueTrigger | undefined {
  const producer = queueProducerOf(bindings)
  if (!producer) return undefined
  const trigger = new QueueTrigger(producer, workerLog)
  const callbacks = deps.service.callbacks
  if (callbacks) callbacks.policy.wake = trigger.callbacks
  return trigger
}

/** The service as the worker calls it: logged like turns (TURNLINE_LOG). */
function workerApi(entry: EntryApp) {
  const { requestLog } = entry.deps.http
  return requestLog ? loggedSessionApi(entry.api, requestLog) : entry.api
}

/**
 * The Worker's `queue` handler: each message of the batch, at once, through the same `runWork`
 * as the Node worker (deliverTrigger). Acknowledged once its work has an outcome (or is gone,
 * failed, or must wait longer than a redelivery can); otherwise redelivered after the pause
 * deliverTrigger gives. A loop run's next step is a new message.
 */
export async function consumeWorkBatch(
  batch: { readonly messages: readonly QueueMessage[] },
  entry: EntryApp,
): Promise<void> {
  const api = workerApi(entry)
  const { trigger } = entry
  // One pass over the outbox serves every `callbacks` message of the batch.
  let pass: Promise<void> | undefined
  const callbacks = () => {
    pass ??= scheduledCallbacks(entry.deps)
    return pass
  }
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = readQueueMessage(message, workerLog)
      if (!parsed) return message.ack()
      const settled = await deliverTrigger(parsed, message.attempts, {
        api,
        wake: (at) => trigger?.wake(at),
        callbacks,
        maxDelayMs: REDELIVERY_MAX_MS,
        log: workerLog,
      })
      const delaySeconds = settled.settle === 'retry' ? Math.ceil(settled.delayMs / 1000) : 0
      workerLog({
        msg: 'work message',
        id: message.id,
        attempt: message.attempts,
        ...(parsed.kind === 'work' ? { work: parsed.work_id, session: parsed.session_id } : {}),
        outcome: settled.outcome,
        ...(settled.settle === 'retry' ? { retry_in_s: delaySeconds } : {}),
      })
      if (settled.settle === 'ack') message.ack()
      else message.retry({ delaySeconds })
    }),
  )
}

/**
 * The background part of the Worker's cron trigger: the loop schedules that are due start
 * their runs, and every pending record gets a message — work whose message was lost, or whose
 * isolate died mid-run (taken over once its lease lapsed). A record that also has its first
 * message in flight runs once: the second delivery finds it gone or its session leased.
 */
export async function scheduledWork(entry: EntryApp): Promise<number> {
  const { trigger } = entry
  if (!(trigger instanceof QueueTrigger)) return 0
  const found = await sweepWork(workerApi(entry), {
    wake: (page) => trigger.wakeAll(page),
    log: workerLog,
  })
  workerLog({ msg: 'work sweep', records: found })
  return found
}

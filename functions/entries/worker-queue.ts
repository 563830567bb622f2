import {
  callbacksMessage,
  parseTriggerMessage,
  type TriggerMessage,
  workMessage,
} from '../../src/contract/trigger-message.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { WorkTrigger } from '../background/work-trigger.ts'

/** The Worker's producer binding of the work queue (wrangler.toml `[[queues.producers]]`). */
export const WORK_QUEUE_BINDING = 'TURNLINE_WORK_QUEUE'

/** A Cloudflare Queue producer binding, as far as it is used here. */
export interface QueueProducer {
  send(body: unknown, options?: { contentType?: 'json'; delaySeconds?: number }): Promise<void>
  sendBatch(messages: Iterable<{ body: unknown; contentType?: 'json' }>): Promise<void>
}

/** Messages one `sendBatch` may carry (Cloudflare Queues: 100). */
const BATCH = 100

/**
 * The longest pause a message is put back for (Cloudflare allows hours). Work that must wait
 * longer — the tenant's quota, a session busy beyond it — is acknowledged instead and found by
 * the every-minute cron sweep: otherwise every sweep would add another message that keeps coming
 * back for the whole wait.
 */
export const REDELIVERY_MAX_MS = 60_000

/** The work queue's producer among the Worker's bindings, when it is bound. */
export function queueProducerOf(bindings: unknown): QueueProducer | undefined {
  if (typeof bindings !== 'object' || bindings === null) return undefined
  const value: unknown = Reflect.get(bindings, WORK_QUEUE_BINDING)
  const looksLike =
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'send') === 'function' &&
    typeof Reflect.get(value, 'sendBatch') === 'function'
  return looksLike ? (value as QueueProducer) : undefined
}

/**
 * The Worker's bell (docs/deploy/cloudflare-workers.md#background-work): a message on the work
 * queue, whose consumer (the same Worker's `queue` handler) runs the recorded work. A send that
 * fails is logged, never thrown: the record is already in the store, and the cron trigger's
 * sweep sends it again.
 */
export class QueueTrigger implements WorkTrigger {
  constructor(
    private readonly queue: QueueProducer,
    private readonly log: (entry: Record<string, unknown>) => void,
  ) {}

  wake(at: WorkLocation): Promise<void> {
    return this.send(workMessage(at), { work: at.work_id, session: at.session_id })
  }

  /** One message per record, in batches (the sweep's pages). */
  async wakeAll(page: readonly WorkLocation[]): Promise<void> {
    for (let start = 0; start < page.length; start += BATCH) {
      const chunk = page.slice(start, start + BATCH)
      try {
        await this.queue.sendBatch(
          chunk.map((at) => ({ body: workMessage(at), contentType: 'json' as const })),
        )
      } catch (error) {
        this.log({
          level: 'warn',
          msg: 'work queue send failed',
          records: chunk.length,
          error: String(error),
        })
      }
    }
  }

  /** Asks for one pass over the callbacks' outbox (notices were just recorded). */
  readonly callbacks = (): Promise<void> => this.send(callbacksMessage(), { callbacks: true })

  private async send(message: TriggerMessage, fields: Record<string, unknown>): Promise<void> {
    try {
      await this.queue.send(message, { contentType: 'json' })
    } catch (error) {
      this.log({ level: 'warn', msg: 'work queue send failed', ...fields, error: String(error) })
    }
  }
}

/** One delivered message of a Cloudflare Queue batch, as far as it is used here. */
export interface QueueMessage {
  readonly id: string
  readonly body: unknown
  readonly attempts: number
  ack(): void
  retry(options?: { delaySeconds?: number }): void
}

/** A message body read, or why it cannot be (it is acknowledged: never worth redelivering). */
export function readQueueMessage(
  message: QueueMessage,
  log: (entry: Record<string, unknown>) => void,
): TriggerMessage | undefined {
  try {
    return parseTriggerMessage(message.body)
  } catch (error) {
    log({ level: 'warn', msg: 'work queue message dropped', id: message.id, error: String(error) })
    return undefined
  }
}

import { parseWorkBell, type WorkBell, workBell } from '../../src/contract/work-bell.ts'
import type { SessionApi } from '../../src/core/session-api.ts'
import type { QueueBells } from './queue-bells.ts'

/** One message of a batch: the queue's id for it and its body. */
export interface BellMessage {
  id: string
  body: string
}

export interface BellConsumer {
  api: Pick<SessionApi, 'runWork'>
  bells: QueueBells
  /** One pass over the completion callbacks' outbox. */
  deliverCallbacks: () => Promise<void>
  log: (entry: Record<string, unknown>) => void
}

/** Delayed bells a work may ring for itself after finding its session busy; then the sweep. */
export const MAX_RINGS = 3
/** The longest delay a queue takes for one message (SQS: 15 minutes). */
const MAX_DELAY_SECONDS = 900

/**
 * Runs one batch of bells from the platform's queue (Lambda's SQS event source) with the same
 * logic as Node's worker: each work bell is `runWork` of its record — exactly once like any turn,
 * so a bell delivered twice finds the record's turn running under the session's lease (busy) or
 * done (the record gone) — and a loop run's next step gets its own bell at once. Work that finds
 * its session busy (or its quota used up) rings itself again, delayed by what the lease (or the
 * quota) says, at most MAX_RINGS times; the periodic sweep, which rings for every pending record,
 * does the rest. Answers the ids of the messages that failed for a reason that may pass (the
 * store could not be read): the queue delivers them again. A malformed message is logged and
 * dropped (delivered again it would fail again). Every bell rung is sent before it resolves.
 */
export async function consumeBells(
  consumer: BellConsumer,
  messages: readonly BellMessage[],
): Promise<string[]> {
  const failed: string[] = []
  let callbacks: Promise<void> | undefined
  await Promise.all(
    messages.map(async (message) => {
      const bell = readBell(consumer, message)
      if (!bell) return
      try {
        if (bell.kind === 'callbacks') {
          callbacks ??= consumer.deliverCallbacks()
          await callbacks
        } else if (bell.work) {
          await runBell(consumer, bell, bell.work)
        }
      } catch (error) {
        consumer.log({
          level: 'warn',
          msg: 'queued bell failed (the queue delivers it again)',
          message: message.id,
          error: String(error),
        })
        failed.push(message.id)
      }
    }),
  )
  await consumer.bells.settled()
  return failed
}

function readBell(consumer: BellConsumer, message: BellMessage): WorkBell | undefined {
  try {
    const bell = parseWorkBell(message.body)
    if (bell.kind === 'work' && !bell.work) throw new Error('a work bell without its work')
    return bell
  } catch (error) {
    consumer.log({
      level: 'warn',
      msg: 'queued bell dropped: not a work bell',
      message: message.id,
      error: String(error),
    })
    return undefined
  }
}

async function runBell(
  consumer: BellConsumer,
  bell: WorkBell,
  at: NonNullable<WorkBell['work']>,
): Promise<void> {
  const result = await consumer.api.runWork(at)
  if (result.outcome === 'done' && result.next) consumer.bells.wake(result.next)
  if (result.outcome === 'busy' && bell.rings < MAX_RINGS) {
    const delay = Math.ceil(result.retryAfterMs / 1000)
    if (delay <= MAX_DELAY_SECONDS) consumer.bells.ring(workBell(at, bell.rings + 1), delay)
  }
}

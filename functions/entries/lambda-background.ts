import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { SqsQueue } from '../../adapters/sqs/sqs-queue.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { type SqsBatchResponse, SqsEventSchema } from '../../src/contract/sqs-event.ts'
import { parseTriggerMessage, type TriggerMessage } from '../../src/contract/trigger-message.ts'
import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import { deliverTrigger } from '../background/trigger-delivery.ts'
import { sweepWork } from '../background/work-sweep.ts'
import type { Deps } from '../deps.ts'
import { parseInput } from '../http/request-input.ts'
import { loggedSessionApi } from '../http/turn-log.ts'
import type { EntryApp } from './entry-app.ts'
import { scheduledCallbacks } from './scheduled-callbacks.ts'
import { QueueTrigger } from './worker-queue.ts'

type Log = (entry: Record<string, unknown>) => void

const log: Log = (entry) => console.log(operatorLogLine(entry, { level: 'info' }))

/** The longest a redelivery can be put off on SQS: a message's visibility timeout, 12 hours. */
const SQS_MAX_DELAY_MS = 43_200_000

/** The work queue of a Lambda deployment: the trigger routes ring, and the queue itself. */
export interface LambdaQueue {
  trigger: QueueTrigger
  queue: SqsQueue
}

/**
 * The work queue when the deployment names one (TURNLINE_WORK_QUEUE_URL): an SQS queue written
 * with the function's credentials, driven by the same trigger as the Worker's Cloudflare Queue
 * (one message per recorded work, a `callbacks` message after a commit with notices, so they go
 * out at once). Undefined without it: background work then runs in the request, as before.
 */
export function lambdaQueue(
  deps: Deps,
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>,
): LambdaQueue | undefined {
  const queueUrl = deps.config.TURNLINE_WORK_QUEUE_URL
  if (queueUrl === undefined) return undefined
  const region = deps.config.S3_REGION
  const queue = new SqsQueue({ queueUrl, credentials, ...(region ? { region } : {}) })
  const trigger = new QueueTrigger(queue, log)
  const callbacks = deps.service.callbacks
  if (callbacks) callbacks.policy.wake = trigger.callbacks
  return { trigger, queue }
}

function required(background: LambdaQueue | undefined): LambdaQueue {
  if (background) return background
  throw new TurnlineError(
    'internal',
    'TURNLINE_WORK_QUEUE_URL is not set: index.work and index.sweep need the work queue',
  )
}

/** The service as the queue's consumer calls it: logged like turns (TURNLINE_LOG). */
function consumerApi(entry: EntryApp) {
  const { requestLog } = entry.deps.http
  return requestLog ? loggedSessionApi(entry.api, requestLog) : entry.api
}

function readMessage(messageId: string, body: string): TriggerMessage | undefined {
  try {
    return parseTriggerMessage(body)
  } catch (error) {
    log({ level: 'warn', msg: 'work queue message dropped', id: messageId, error: String(error) })
    return undefined
  }
}

/**
 * `index.work`, the SQS event source's handler: each message of the batch, at once, through the
 * same delivery as the Worker's queue consumer (trigger-delivery.ts: Node's `runWork`; a loop
 * run's next step is a new message). A message whose work has an outcome (or is gone, failed, or
 * must wait longer than SQS can delay) succeeds and is deleted; one to deliver again is hidden
 * for the pause the delivery gives (ChangeMessageVisibility) and reported in
 * `batchItemFailures`. A message that is not a trigger is logged and dropped.
 */
export async function workHandler(
  entry: EntryApp,
  background: LambdaQueue | undefined,
  event: unknown,
): Promise<SqsBatchResponse> {
  const { trigger, queue } = required(background)
  const { Records } = parseInput(SqsEventSchema, event, 'event')
  const api = consumerApi(entry)
  const failures: { itemIdentifier: string }[] = []
  // One pass over the outbox serves every `callbacks` message of the batch.
  let pass: Promise<void> | undefined
  const callbacks = () => {
    pass ??= scheduledCallbacks(entry.deps)
    return pass
  }
  await Promise.all(
    Records.map(async (record) => {
      const message = readMessage(record.messageId, record.body)
      if (!message) return
      const attempt = Number(record.attributes.ApproximateReceiveCount)
      const settled = await deliverTrigger(message, attempt, {
        api,
        wake: (at) => trigger.wake(at),
        callbacks,
        maxDelayMs: SQS_MAX_DELAY_MS,
        log,
      })
      const delaySeconds = settled.settle === 'retry' ? Math.ceil(settled.delayMs / 1000) : 0
      log({
        msg: 'work message',
        id: record.messageId,
        attempt,
        ...(message.kind === 'work' ? { work: message.work_id, session: message.session_id } : {}),
        outcome: settled.outcome,
        ...(settled.settle === 'retry' ? { retry_in_s: delaySeconds } : {}),
      })
      if (settled.settle === 'ack') return
      // Delivered again after the pause; without it, after the queue's visibility timeout.
      await queue.changeVisibility(record.receiptHandle, delaySeconds).catch((error: unknown) => {
        log({
          level: 'warn',
          msg: 'work message delay not set',
          id: record.messageId,
          error: String(error),
        })
      })
      failures.push({ itemIdentifier: record.messageId })
    }),
  )
  return { batchItemFailures: failures }
}

/**
 * `index.sweep`, for an EventBridge schedule: the loop schedules that are due start their runs,
 * and every pending record gets a message — work whose message was lost, whose function died
 * mid-run (taken over once its lease lapsed), or that waits for its session or its quota. A
 * record that also has a message in flight runs once.
 */
export async function sweepHandler(
  entry: EntryApp,
  background: LambdaQueue | undefined,
): Promise<{ found: number }> {
  const { trigger } = required(background)
  const found = await sweepWork(consumerApi(entry), {
    wake: (page) => trigger.wakeAll(page),
    log,
  })
  log({ msg: 'work sweep', records: found })
  return { found }
}

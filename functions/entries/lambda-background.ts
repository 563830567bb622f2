import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { SqsQueue } from '../../adapters/sqs/sqs-queue.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { type SqsBatchResponse, SqsEventSchema } from '../../src/contract/sqs-event.ts'
import { serializeWorkBell, workBell } from '../../src/contract/work-bell.ts'
import { consumeBells, MAX_RINGS } from '../background/bell-consumer.ts'
import { QueueBells } from '../background/queue-bells.ts'
import { sweepWork } from '../background/work-sweep.ts'
import type { Deps } from '../deps.ts'
import { parseInput } from '../http/request-input.ts'
import type { EntryApp } from './entry-app.ts'
import { scheduledCallbacks } from './scheduled-callbacks.ts'

const log = (entry: Record<string, unknown>) =>
  console.log(JSON.stringify({ ts: new Date().toISOString(), ...entry }))

/**
 * The bells of a Lambda deployment with a work queue (TURNLINE_WORK_QUEUE_URL): messages on its
 * SQS queue, sent with the function's credentials. Notices the callbacks' outbox records ring
 * it too, so they go out right after their commit. Undefined without a queue: background work
 * then runs in the request, as before.
 */
export function sqsBells(
  deps: Deps,
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>,
): QueueBells | undefined {
  const queueUrl = deps.config.TURNLINE_WORK_QUEUE_URL
  if (queueUrl === undefined) return undefined
  const region = deps.config.S3_REGION
  const queue = new SqsQueue({ queueUrl, credentials, ...(region ? { region } : {}) })
  const bells = new QueueBells((bell, delay) => queue.send(serializeWorkBell(bell), delay), log)
  if (deps.service.callbacks) deps.service.callbacks.policy.wake = bells.ringCallbacks
  return bells
}

/** What the Lambda runtime calls a response-streaming handler with. */
export type StreamingHandler = (event: unknown, stream: unknown, context: unknown) => Promise<void>

declare const awslambda: { streamifyResponse(handler: StreamingHandler): StreamingHandler }

/**
 * The API handler, which returns only once the bells its request rang were sent: the client has
 * its answer by then (the stream ended), but a function that returned may be frozen before a
 * send left it.
 */
export function drainedHandler(served: StreamingHandler, bells: QueueBells): StreamingHandler {
  return awslambda.streamifyResponse(async (event, stream, context) => {
    try {
      await served(event, stream, context)
    } finally {
      await bells.settled()
    }
  })
}

function requireBells(bells: QueueBells | undefined): QueueBells {
  if (bells) return bells
  throw new TurnlineError(
    'internal',
    'TURNLINE_WORK_QUEUE_URL is not set: index.work and index.sweep need the work queue',
  )
}

/**
 * `index.work`, the SQS event source's handler: runs the batch's bells (bell-consumer.ts) and
 * reports the messages to deliver again (`ReportBatchItemFailures`).
 */
export async function workHandler(
  entry: EntryApp,
  bells: QueueBells | undefined,
  event: unknown,
): Promise<SqsBatchResponse> {
  const queued = requireBells(bells)
  const { Records } = parseInput(SqsEventSchema, event, 'event')
  const failed = await consumeBells(
    {
      api: entry.api,
      bells: queued,
      deliverCallbacks: () => scheduledCallbacks(entry.deps),
      log,
    },
    Records.map((record) => ({ id: record.messageId, body: record.body })),
  )
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) }
}

/**
 * `index.sweep`, for an EventBridge schedule: fires the loop schedules that are due and rings
 * for every pending record — work whose message was lost, whose function died, or that waits
 * for its session or its quota. Its bells ring no follow-ups of their own (the next sweep does).
 */
export async function sweepHandler(
  entry: EntryApp,
  bells: QueueBells | undefined,
): Promise<{ found: number }> {
  const queued = requireBells(bells)
  const found = await sweepWork(entry.api, (at) => queued.ring(workBell(at, MAX_RINGS)), log)
  await queued.settled()
  log({ msg: 'work sweep', found })
  return { found }
}

import { streamHandle } from 'hono/aws-lambda'
import { awsCredentialChain } from '../../adapters/anthropic/aws-credential-chain.ts'
import type { SqsBatchResponse } from '../../src/contract/sqs-event.ts'
import { useRankTables } from '../../src/core/session-service.ts'
import type { SweepResult } from '../../src/store/retention-sweep.ts'
import { createDeps } from '../deps.ts'
import { lambdaPeer } from '../http/client-address.ts'
import { lambdaTimeLeft } from '../http/request-time-left.ts'
import { claimedDeps, entryApp, onStartupError } from './entry-app.ts'
import { type LambdaQueue, lambdaQueue, sweepHandler, workHandler } from './lambda-background.ts'
import { nodeProcessBackends } from './node-process-backends.ts'
import { rankTableFiles } from './rank-table-files.ts'
import { scheduledCallbacks } from './scheduled-callbacks.ts'
import { scheduledRetention } from './scheduled-retention.ts'

/**
 * The AWS Lambda function's handlers, which the entry (lambda.ts) loads once it has set V8's
 * flags: `index.handler` of the bundle that `npm run build:lambda` writes to dist/lambda. Responses stream (`streamHandle`): SSE turns and followed feeds reach the client
 * event by event, so the function must be invoked in RESPONSE_STREAM mode (a function URL with
 * `InvokeMode: RESPONSE_STREAM`, as infra/deploy/lambda/template.yaml sets up). Lambda has no
 * durable filesystem: configure S3_BUCKET, and Upstash (or REDIS_URL: a Redis the function
 * reaches over TCP, such as ElastiCache in its VPC) for coordination across instances. A
 * configuration error fails the init, and so does a function without TURNLINE_API_KEYS (or the
 * key registry) unless TURNLINE_SINGLE_TENANT asks for an unauthenticated one. With
 * TURNLINE_WORK_QUEUE_URL, background work is recorded and rung on that SQS queue, which
 * `index.work` consumes and `index.sweep` sweeps for (lambda-background.ts).
 * docs/deploy/aws-lambda.md has the whole recipe.
 */
useRankTables(rankTableFiles)
let background: LambdaQueue | undefined
const entry = await createDeps(process.env, {
  // As on the Node server (node-process-backends.ts): Claude on Bedrock signs with the function's
  // role, on Vertex with a bundled credentials file; /docs offline from the renderer's bundle
  // the build puts beside index.mjs (reference/).
  ...nodeProcessBackends,
  peerAddress: lambdaPeer,
  // A function URL is public: without keys the init fails (TURNLINE_SINGLE_TENANT aside).
  reachableFromAnywhere: true,
  // Each concurrent request is another execution environment: S3 needs a shared Redis beside it.
  manyInstances: true,
})
  .then(claimedDeps)
  .then((deps) => {
    // The work queue (TURNLINE_WORK_QUEUE_URL), written with the function's role.
    background = lambdaQueue(deps, awsCredentialChain())
    const trigger = background?.trigger
    return entryApp(deps, {
      log: (line) => console.log(line),
      // Followed feeds end before the function's timeout (the invocation's remaining time).
      timeLeft: lambdaTimeLeft,
      ...(trigger ? { trigger } : {}),
    })
  })
  .catch(onStartupError())

export const handler = streamHandle(entry.app)

/** `index.work`, the work queue's SQS event source (batch item failures reported). */
export const work = (event: unknown): Promise<SqsBatchResponse> =>
  workHandler(entry, background, event)

/** `index.sweep`, for an EventBridge schedule: loop schedules, and work whose message was lost. */
export const sweep = (): Promise<{ found: number }> => sweepHandler(entry, background)

/** `index.callbacks`, for an EventBridge schedule: one sweep of the callbacks' outbox. */
export const callbacks = (): Promise<void> => scheduledCallbacks(entry.deps)

/** `index.retention`, for an EventBridge schedule (the template's RetentionFunction). */
export const retention = (): Promise<SweepResult> =>
  scheduledRetention(entry.deps, { now: Date.now() })

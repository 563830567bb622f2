import { streamHandle } from 'hono/aws-lambda'
import { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { RedisTcpTenantLimiter } from '../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type SweepResult, sweepRetention } from '../../src/store/retention-sweep.ts'
import { createApp } from '../app.ts'
import { createDeps } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import { logStart } from './start-log.ts'

/**
 * AWS Lambda entry (`index.handler` of the bundle that `npm run build:lambda` writes to
 * dist/lambda). Responses stream (`streamHandle`): SSE turns and followed feeds reach the client
 * event by event, so the function must be invoked in RESPONSE_STREAM mode (a function URL with
 * `InvokeMode: RESPONSE_STREAM`, as infra/deploy/lambda/template.yaml sets up). Lambda has no
 * durable filesystem: configure S3_BUCKET, and Upstash (or REDIS_URL) for coordination across
 * instances.
 * docs/deploy/aws-lambda.md has the whole recipe.
 */
const deps = await createDeps(process.env, {
  // REDIS_URL: a Redis the function reaches over TCP (ElastiCache in the function's VPC).
  redisCoordinator: (url, deadline) => new RedisTcpCoordinator({ url, deadline }),
  redisLimiter: (url, deadline) => new RedisTcpTenantLimiter({ url, deadline }),
}).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`turnline: ${error.message}`)
  throw error
})
for (const notice of deps.notices) console.log(`turnline: ${notice}`)
logStart(deps)

export const handler = streamHandle(
  createApp({ api: new SessionService(deps.service), auth: deps.auth, ...deps.http }),
)

/**
 * `index.retention`, for an EventBridge schedule (the template's RetentionFunction): VT Code's
 * retention policy over every workspace of every tenant. Short-lived instances never reach the
 * every-25th-creation pass of a long-running server.
 */
export async function retention(): Promise<SweepResult> {
  const result = await sweepRetention(deps.service.sessions.objects, { now: Date.now() })
  const deleted = result.deleted.reduce((n, d) => n + d.sessions.length, 0)
  console.log(
    JSON.stringify({
      msg: 'retention sweep',
      workspaces: result.workspaces,
      deleted,
      failed: result.failed,
    }),
  )
  if (result.failed.length > 0) {
    throw new Error(`retention: ${result.failed.length} workspace(s) failed (see the log line)`)
  }
  return result
}

import { handle } from 'hono/aws-lambda'
import { SessionService } from '../../src/core/session-service.ts'
import { createApp } from '../app.ts'
import { createDeps } from '../deps.ts'

/**
 * AWS Lambda entry (API Gateway / function URL). Lambda has no durable filesystem: configure
 * S3_BUCKET (and Upstash for coordination across instances). `handle` buffers responses, so SSE
 * and followed feeds arrive whole when they end; prefer JSON/NDJSON pages there.
 */
const deps = await createDeps(process.env)
for (const notice of deps.notices) console.log(`turnline: ${notice}`)

export const handler = handle(
  createApp({ api: new SessionService(deps.service), auth: deps.auth, ...deps.http }),
)

import { Hono } from 'hono'
import { IntentRequestSchema } from '../../src/contract/api.ts'
import { SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import { IntentResponseSchema } from '../../src/contract/session-responses.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { jsonBody, noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * `POST /sessions/:id/intents`: queue a steering follow-up (202 `{id, pending}`), also while a
 * turn runs; the next turn boundary applies queued intents in order. A full queue is 409
 * `follow_up_queue_full` and drops nothing.
 */
export function steeringRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/sessions/:id/intents',
    operation({
      operationId: 'enqueueIntent',
      tags: ['steering'],
      summary: 'Queue a steering follow-up',
      description:
        "Accepted also while a turn runs; the next turn boundary applies queued intents in order (at most 16 pending). A full queue is 409 `follow_up_queue_full` and drops nothing. A `text` over the inline limit (`TURNLINE_TOOL_MAX_RESPONSE_BYTES`) is kept whole as an artifact of the session as it is accepted, and the model reads a preview naming it; over the caps of output artifacts it is 413 `payload_too_large`, over the tenant's daily `output_bytes_per_day` 429 `quota_exceeded` (nothing kept, nothing queued).",
      responses: {
        202: jsonAnswer('Queued.', IntentResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 429, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, IntentRequestSchema, {
      required: true,
      examples: {
        redirect: { summary: 'Change course', value: { text: 'Use the existing helper instead.' } },
      },
    }),
    async (c) => {
      const sessionId = c.req.valid('param').id
      const accepted = await ctx.api.enqueueIntent(c.get('tenant'), sessionId, c.req.valid('json'))
      return c.json(accepted, 202)
    },
  )
  return routes
}

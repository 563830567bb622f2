import { Hono } from 'hono'
import { CompactRequestSchema } from '../../src/contract/compact-request.ts'
import { IdempotencyHeadersSchema, SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import { TurnResponseSchema } from '../../src/contract/turn-responses.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { turnResponseJson } from '../http/event-framing.ts'
import { jsonResponse } from '../http/json-response.ts'
import { headerParams, jsonBody, noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * `POST /sessions/:id/compact {instructions?}`: manual compaction. Answers a TurnResponse
 * (status `completed`) holding `thread.compact_boundary`; `Idempotency-Key` makes a retry
 * return the first answer without summarizing again. 409 while a turn is open, and (retryable,
 * `details.reason` `out_of_time`) when the platform's timeout neared before it was done.
 */
export function compactRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/sessions/:id/compact',
    operation({
      operationId: 'compactSession',
      tags: ['turns'],
      summary: 'Compact the transcript now',
      description:
        'Manual compaction (trigger `manual`, always summarizes): the answer holds `thread.compact_boundary`. 409 while a turn is open or when there is nothing to compact. With `Idempotency-Key`, a retry answers the first outcome without summarizing again. Where the platform bounds the request (AWS Lambda), a compaction still running as its timeout nears is stopped and keeps nothing: 409 `conflict`, `details.reason` `out_of_time`, with Retry-After; send it again.',
      responses: {
        200: jsonAnswer('Status `completed`; events: the compact boundary.', TurnResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 422, 500, 502, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    headerParams(IdempotencyHeadersSchema),
    jsonBody(ctx, CompactRequestSchema, {
      required: false,
      examples: {
        default: { summary: 'The default summary instruction', value: {} },
        focused: {
          summary: 'Own instructions',
          value: { instructions: 'Keep the failing test names and the plan.' },
        },
      },
    }),
    async (c) => {
      const idempotencyKey = c.req.valid('header')['Idempotency-Key']
      const body = c.req.valid('json')
      const response = await ctx.api.compact(c.get('tenant'), c.req.valid('param').id, {
        ...(body.instructions === undefined ? {} : { instructions: body.instructions }),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        // Its summary call and hooks stop before the platform's timeout (Lambda), as a turn's do.
        ...invocationTime(ctx, c.env),
      })
      return jsonResponse(turnResponseJson(response))
    },
  )
  return routes
}

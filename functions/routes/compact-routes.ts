import { Hono } from 'hono'
import { CompactRequestSchema } from '../../src/contract/compact-request.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { JSON_TYPE, turnResponseJson } from '../http/event-framing.ts'
import { parseIdempotencyKey, parseSessionId, rejectQuery } from '../http/request-input.ts'

/**
 * `POST /sessions/:id/compact {instructions?}`: manual compaction. Answers a TurnResponse
 * (status `completed`) holding `thread.compact_boundary`; `Idempotency-Key` makes a retry
 * return the first answer without summarizing again. 409 while a turn is open.
 */
export function compactRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post('/sessions/:id/compact', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const idempotencyKey = parseIdempotencyKey(c.req.header('idempotency-key'))
    const body = await validBody(c, ctx, CompactRequestSchema)
    const response = await ctx.api.compact(c.get('tenant'), sessionId, {
      ...(body.instructions === undefined ? {} : { instructions: body.instructions }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    })
    return new Response(turnResponseJson(response), { headers: { 'content-type': JSON_TYPE } })
  })
  return routes
}

import { Hono } from 'hono'
import { HandoffRouteRequestSchema } from '../../src/contract/handoff-request.ts'
import { OrientationQuerySchema } from '../../src/contract/orientation-view.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import {
  parseIdempotencyKey,
  parseQuery,
  parseSessionId,
  rejectQuery,
} from '../http/request-input.ts'

/**
 * The agent layer on one session: its orientation (`GET …/orientation[?preview=1]`), the
 * handoff to the next agent (`POST …/handoff`) and the verification of a proposed change
 * (`POST …/verify`).
 */
export function agentSessionRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get('/sessions/:id/orientation', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    const query = parseQuery(OrientationQuerySchema, c.req.url)
    const preview = query.preview === '1' || query.preview === 'true'
    return c.json(await ctx.api.getOrientation(c.get('tenant'), sessionId, { preview }))
  })
  routes.post('/sessions/:id/handoff', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const idempotencyKey = parseIdempotencyKey(c.req.header('idempotency-key'))
    const body = await validBody(c, ctx, HandoffRouteRequestSchema)
    const response = await ctx.api.handoff(c.get('tenant'), sessionId, body, {
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    })
    return c.json(response, response.session && !response.session.duplicate ? 201 : 200)
  })
  return routes
}

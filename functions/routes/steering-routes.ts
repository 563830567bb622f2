import { Hono } from 'hono'
import { IntentRequestSchema } from '../../src/contract/api.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { parseSessionId, rejectQuery } from '../http/request-input.ts'

/**
 * `POST /sessions/:id/intents`: queue a steering follow-up (202 `{id, pending}`), also while a
 * turn runs; the next turn boundary applies queued intents in order. A full queue is 409
 * `follow_up_queue_full` and drops nothing.
 */
export function steeringRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post('/sessions/:id/intents', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, IntentRequestSchema)
    const accepted = await ctx.api.enqueueIntent(c.get('tenant'), sessionId, body)
    return c.json(accepted, 202)
  })
  return routes
}

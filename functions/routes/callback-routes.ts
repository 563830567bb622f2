import { Hono } from 'hono'
import { DeliveryListSchema } from '../../src/contract/callback-delivery.ts'
import { LoopIdParamsSchema, SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * The completion-callback deliveries of a session, and a loop's own (docs/http-api.md#completion-callbacks).
 */
export function callbackRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/sessions/:id/deliveries',
    operation({
      operationId: 'listSessionDeliveries',
      tags: ['sessions'],
      summary: "List a session's callback deliveries",
      description:
        "Every completion-callback notice of the session (turn.waiting, turn.completed, turn.failed, thread.completed), oldest first, with its state (`pending`, `delivered`, `failed`), the body POSTed and each attempt's time and HTTP status or error.",
      responses: {
        200: jsonAnswer('The deliveries.', DeliveryListSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    async (c) => c.json(await ctx.api.listDeliveries(c.get('tenant'), c.req.valid('param').id)),
  )
  routes.get(
    '/loops/:id/deliveries',
    operation({
      operationId: 'listLoopDeliveries',
      tags: ['loops'],
      summary: "List a loop's own callback deliveries",
      description:
        'The `loop.stopped` notices of runs that stopped before any step had a session (paused before the first step, a fault before its session was created), oldest first, with their state and attempts. A run that stopped later reports in its newest step session: `GET /v1/sessions/{id}/deliveries` lists those.',
      responses: {
        200: jsonAnswer('The deliveries.', DeliveryListSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(LoopIdParamsSchema),
    noQuery,
    async (c) => c.json(await ctx.api.listLoopDeliveries(c.get('tenant'), c.req.valid('param').id)),
  )
  return routes
}

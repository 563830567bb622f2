import { Hono } from 'hono'
import { DeliveryListSchema } from '../../src/contract/callback-delivery.ts'
import { SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/** The completion-callback deliveries of a session (docs/http-api.md#completion-callbacks). */
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
  return routes
}

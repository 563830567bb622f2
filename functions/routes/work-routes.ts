import { Hono } from 'hono'
import { WorkStatusSchema } from '../../src/contract/background-responses.ts'
import { WorkParamsSchema } from '../../src/contract/route-params.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/** `GET /sessions/:id/work/:work_id`: where a background turn stands. */
export function workRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/sessions/:id/work/:work_id',
    operation({
      operationId: 'getWork',
      tags: ['turns'],
      summary: 'Where a background turn stands',
      description:
        'Queued, running, done (with its turn id and status) or failed (with the error), from its record and the session. A work id older than the session’s last 16 turns, with no record left, is 404.',
      responses: {
        200: jsonAnswer('The work.', WorkStatusSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(WorkParamsSchema),
    noQuery,
    async (c) => {
      const { id, work_id } = c.req.valid('param')
      return c.json(await ctx.api.workStatus(c.get('tenant'), id, work_id))
    },
  )
  return routes
}

import { Hono } from 'hono'
import {
  InputItemListSchema,
  InputItemsQuerySchema,
  pageOfItems,
} from '../../src/contract/open-responses-input-items.ts'
import { ResponseIdParamsSchema } from '../../src/contract/route-params.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { pathParams, queryParams } from '../openapi/declared-input.ts'
import { answerSchema, openResponsesErrorAnswers, operation } from '../openapi/route-docs.ts'

/**
 * `GET /v1/responses/{id}/input_items`: one page of the items a response was given as input
 * (src/core/open-responses/response-input-items.ts), as the Open Responses list operation
 * pages them (`limit`, `order`, `after`, `before`). Tenant-scoped like every response route:
 * another tenant's response, a deleted one and a `store: false` one are 404.
 */
export function responseItemsRoute(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/responses/:id/input_items',
    operation({
      operationId: 'listResponseInputItems',
      tags: ['exec'],
      summary: "List a response's input items",
      description:
        "The items the response was given as input, in input order (`order=asc`) or last first (`desc`, the default): the conversation its session started with — the previous response's whole conversation when `previous_response_id` named one, then the request's `input` items — and the user messages its turn ran. The request's system and developer messages are its `instructions` and reasoning items are not kept, so neither is listed. Item ids belong to this list: `after` / `before` take them.",
      responses: {
        200: {
          description: 'One page of input items.',
          content: { 'application/json': { schema: answerSchema(InputItemListSchema) } },
        },
        ...openResponsesErrorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(ResponseIdParamsSchema),
    queryParams(InputItemsQuerySchema),
    async (c) => {
      const sessionId = c.req.valid('param').id.slice('resp_'.length)
      const items = await ctx.api.responseInputItems(c.get('tenant'), sessionId)
      return c.json(pageOfItems(items, c.req.valid('query')))
    },
  )
  return routes
}

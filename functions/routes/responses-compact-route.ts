import { Hono } from 'hono'
import {
  CompactResourceSchema,
  ResponsesCompactRequestSchema,
} from '../../src/contract/open-responses-compaction.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { jsonBody, noQuery } from '../openapi/declared-input.ts'
import { answerSchema, openResponsesErrorAnswers, operation } from '../openapi/route-docs.ts'

/**
 * `POST /v1/responses/compact` (the specification's `compactResponse`): the conversation
 * compacted as a session compacts its transcript, answered as the specification's compacted
 * response (src/core/open-responses/compact-response.ts); nothing is kept.
 */
export function responsesCompactRoute(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/responses/compact',
    operation({
      operationId: 'compactResponse',
      tags: ['exec'],
      summary: 'Open Responses: compact a conversation',
      description:
        "The conversation — the previous response's whole conversation (`previous_response_id`), then the `input` items — is compacted as `POST /v1/sessions/{id}/compact` compacts a session (one summary call; the user messages are kept, the rest becomes the summary). The answer's `output` is the kept user messages, then one `compaction` item that stands for the whole compacted conversation: send them back as the `input` of `POST /v1/responses` (or of another compaction), followed by what comes next. Nothing is kept on the server. Where the platform bounds the request (AWS Lambda), a compaction still running as its timeout nears is stopped: 409 `conflict`, `details.reason` `out_of_time`, with Retry-After; send it again.",
      responses: {
        200: {
          description: 'The compacted conversation.',
          content: { 'application/json': { schema: answerSchema(CompactResourceSchema) } },
        },
        ...openResponsesErrorAnswers(400, 401, 404, 409, 413, 422, 500, 502, 503),
      },
    }),
    noQuery,
    jsonBody(ctx, ResponsesCompactRequestSchema, {
      required: true,
      examples: {
        conversation: {
          summary: 'A conversation',
          value: {
            model: 'gpt-5-mini',
            input: [
              { type: 'message', role: 'user', content: 'Remember the code word: slate.' },
              { type: 'message', role: 'assistant', content: 'OK.' },
            ],
          },
        },
        previous: {
          summary: "A response's conversation",
          value: { model: 'gpt-5-mini', previous_response_id: 'resp_s1' },
        },
      },
    }),
    async (c) => {
      // Its summary call and hooks stop before the platform's timeout (Lambda), as a turn's do.
      const options = invocationTime(ctx, c.env)
      return c.json(await ctx.api.compactResponse(c.get('tenant'), c.req.valid('json'), options))
    },
  )
  return routes
}

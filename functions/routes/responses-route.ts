import { Hono } from 'hono'
import { ResponseResourceSchema } from '../../src/contract/api-responses.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import {
  ResponseReadQuerySchema,
  ResponsesRequestSchema,
  toExecBody,
} from '../../src/contract/open-responses-request.ts'
import { ResponseIdParamsSchema } from '../../src/contract/route-params.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { JSON_TYPE, SSE_TYPE, streamHeaders } from '../http/event-framing.ts'
import { mapError } from '../http/http-errors.ts'
import { liveResponse } from '../http/live-stream.ts'
import { openResponsesErrorResponse } from '../http/open-responses-errors.ts'
import { EXTENSIONS_HEADER, wantsExtensions } from '../http/open-responses-extensions.ts'
import { wantsEventStream } from '../http/request-input.ts'
import { jsonBody, noQuery, pathParams, queryParams } from '../openapi/declared-input.ts'
import {
  answerSchema,
  openResponsesErrorAnswers,
  operation,
  streamContent,
} from '../openapi/route-docs.ts'
import { readResponse } from './response-read.ts'

const STREAM =
  "`event: <type>`, `data: <event JSON with sequence_number>` per Open Responses event (schema version 2026-04-24), then `data: [DONE]`. Turnline's own items and events (`vtcode:` prefix) only with the request header `Turnline-Extensions: vtcode`."
const STREAM_EXAMPLE =
  'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_s1","object":"response","status":"in_progress"}}\n\ndata: [DONE]\n\n'

/**
 * `POST /v1/responses`, Open Responses-compatible: one exec session (create, one turn,
 * complete) whose ThreadEvents go through the Open Responses bridge. With `stream: true` or
 * `Accept: text/event-stream` the bridged events stream live and end with `data: [DONE]`;
 * otherwise the answer is the response object (the view is src/core/open-responses/). The
 * response id is `resp_<thread id>`, the same id the session's derived Open Responses view uses;
 * `GET /v1/responses/:id` reads it back (and resumes its stream).
 */
export function responsesRoute(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/responses',
    operation({
      operationId: 'createResponse',
      tags: ['exec'],
      summary: 'Open Responses: one exec run as a response',
      description:
        'Open Responses-compatible: one exec session (create, one turn, complete) whose events go through the Open Responses bridge. With `stream: true` or `Accept: text/event-stream` the bridged events stream live and end with `data: [DONE]`; otherwise the answer is the response object. `GET /v1/responses/{id}` reads it back.',
      responses: {
        200: {
          description: 'The response resource, or with `stream: true` the event stream.',
          content: {
            'application/json': { schema: answerSchema(ResponseResourceSchema) },
            'text/event-stream': streamContent(
              `With \`stream: true\` or \`Accept: text/event-stream\`. ${STREAM}`,
              STREAM_EXAMPLE,
            ),
          },
        },
        ...openResponsesErrorAnswers(400, 401, 413, 422, 500, 502, 503),
      },
    }),
    noQuery,
    jsonBody(ctx, ResponsesRequestSchema, {
      required: true,
      examples: {
        text: {
          summary: 'A text input',
          value: { model: 'gpt-5-mini', input: 'Summarize README.md.' },
        },
        streamed: {
          summary: 'Streamed',
          value: { model: 'gpt-5-mini', input: 'Summarize README.md.', stream: true },
        },
      },
    }),
    async (c) => {
      const request = c.req.valid('json')
      const createdAt = Math.floor(Date.now() / 1000)
      const body = toExecBody(request, createdAt)
      const { prompt: _prompt, ...config } = body
      const tenant = c.get('tenant')
      // Built from the config the session stores, so GET /v1/responses/:id answers the same.
      const view = ctx.api.openResponsesView(config, {
        extensions: wantsExtensions(c.req.header(EXTENSIONS_HEADER)),
      })

      if (!(request.stream === true || wantsEventStream(c.req.header('accept')))) {
        const result = await ctx.api.exec(tenant, body)
        for (const event of result.events) view.frames(event)
        if (!view.response) throw new TurnlineError('internal', 'exec returned no events')
        return new Response(JSON.stringify(view.response), {
          status: 200,
          headers: { 'content-type': JSON_TYPE },
        })
      }

      let streamed = 0
      const frames = (event: ThreadEvent) => view.frames(event)
      return liveResponse({
        run: (push) =>
          ctx.api.exec(tenant, body, {
            onEvent: (event) => {
              streamed += 1
              push(frames(event))
            },
          }),
        tail: (result) => result.events.slice(streamed).map(frames).join('') + view.done,
        failure: (error) => {
          const { message } = mapError(error, ctx.log).body.error
          return frames({ type: 'error', message }) + view.done
        },
        errorResponse: (error) => openResponsesErrorResponse(error, ctx.log),
        headers: streamHeaders(SSE_TYPE),
      })
    },
  )
  routes.get(
    '/responses/:id',
    operation({
      operationId: 'getResponse',
      tags: ['exec'],
      summary: 'Read a response back, or resume its stream',
      description:
        'The response resource rebuilt from its session; with `stream=true` (or `Accept: text/event-stream`) the stream itself, from `starting_after` on. A response still running is followed until it completes; a stream cut off by the follow limit ends without `[DONE]` and resumes with `starting_after`.',
      responses: {
        200: {
          description: 'The response resource, or the stream from `starting_after`.',
          content: {
            'application/json': { schema: answerSchema(ResponseResourceSchema) },
            'text/event-stream': streamContent(
              `Events with a \`sequence_number\` above \`starting_after\`. ${STREAM}`,
              STREAM_EXAMPLE,
            ),
          },
        },
        ...openResponsesErrorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(ResponseIdParamsSchema),
    queryParams(ResponseReadQuerySchema),
    (c) => readResponse(c, ctx),
  )
  return routes
}

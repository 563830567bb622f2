import { Hono } from 'hono'
import { TurnlineError } from '../../src/contract/errors.ts'
import {
  ResponseReadQuerySchema,
  ResponsesRequestSchema,
} from '../../src/contract/open-responses-request.ts'
import { type ResponseRunResult, toResponseRun } from '../../src/contract/open-responses-run.ts'
import {
  ResponseDeletedSchema,
  ResponseResourceSchema,
} from '../../src/contract/resource-responses.ts'
import {
  IdempotencyHeadersSchema,
  ResponseIdParamsSchema,
} from '../../src/contract/route-params.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { backgroundResponse, cancelResponse } from '../http/background-response.ts'
import { SSE_TYPE, streamHeaders } from '../http/event-framing.ts'
import { mapError } from '../http/http-errors.ts'
import { jsonResponse } from '../http/json-response.ts'
import { liveResponse } from '../http/live-stream.ts'
import { openResponsesErrorResponse } from '../http/open-responses-errors.ts'
import { EXTENSIONS_HEADER, wantsExtensions } from '../http/open-responses-extensions.ts'
import { wantsEventStream } from '../http/request-input.ts'
import {
  headerParams,
  jsonBody,
  noQuery,
  pathParams,
  queryParams,
} from '../openapi/declared-input.ts'
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
 * `POST /v1/responses`, Open Responses-compatible: one response run (a session seeded with the
 * conversation so far, one turn; src/core/open-responses/response-run.ts) whose ThreadEvents go
 * through the Open Responses bridge. With `stream: true` or
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
      summary: 'Open Responses: create a response',
      description:
        "Open Responses-compatible: a session seeded with the conversation so far (`previous_response_id`, the items of `input`) runs one turn whose events go through the Open Responses bridge. Function `tools` are the client's: a call ends the response with `function_call` items, and `function_call_output` items in a later request continue the loop. With `stream: true` or `Accept: text/event-stream` the events stream live and end with `data: [DONE]`; otherwise the answer is the response object. With `Idempotency-Key` a retry answers the same response; sent while the key's first request still runs it is 409 `session_busy` with Retry-After, as a turn's retry is (never a stream ending `response.failed`: that response is running), its `details.response_id` naming the running response to follow. `GET /v1/responses/{id}` reads it back.",
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
        ...openResponsesErrorAnswers(400, 401, 409, 413, 422, 500, 502, 503),
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
    headerParams(IdempotencyHeadersSchema),
    async (c) => {
      const request = c.req.valid('json')
      const key = c.req.valid('header')['Idempotency-Key']
      const run = toResponseRun(request, Math.floor(Date.now() / 1000))
      const call = {
        run,
        ...(request.previous_response_id
          ? { previousResponseId: request.previous_response_id }
          : {}),
        ...(key === undefined ? {} : { idempotencyKey: key }),
      }
      const tenant = c.get('tenant')
      const toStream = request.stream === true || wantsEventStream(c.req.header('accept'))
      if (request.background) {
        return backgroundResponse(ctx, tenant, call, { stream: toStream, store: request.store })
      }
      // Built from the config the session stores, so GET /v1/responses/:id answers the same.
      const view = ctx.api.openResponsesView(run.config, {
        extensions: wantsExtensions(c.req.header(EXTENSIONS_HEADER)),
      })
      // A turn that waits on the client's function calls ends the response with them; one that
      // paused (before the platform's timeout, or for the quota) ends it `incomplete`.
      const ending = (result: ResponseRunResult) => view.ending(result)
      const timed = invocationTime(ctx, c.env)

      if (!toStream) {
        const result = await ctx.api.respond(tenant, call, timed)
        for (const event of result.events) view.frames(event)
        ending(result)
        if (!view.response) throw new TurnlineError('internal', 'the response run gave no events')
        return jsonResponse(JSON.stringify(view.response))
      }

      let streamed = 0
      const frames = (event: ThreadEvent) => view.frames(event)
      return liveResponse({
        run: (push) =>
          ctx.api.respond(tenant, call, {
            ...timed,
            onEvent: (event) => {
              streamed += 1
              push(frames(event))
            },
          }),
        tail: (result) =>
          result.events.slice(streamed).map(frames).join('') + ending(result) + view.done,
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
        ...openResponsesErrorAnswers(400, 401, 404, 429, 500, 503),
      },
    }),
    pathParams(ResponseIdParamsSchema),
    queryParams(ResponseReadQuerySchema),
    (c) => readResponse(c, ctx),
  )
  routes.post(
    '/responses/:id/cancel',
    operation({
      operationId: 'cancelResponse',
      tags: ['exec'],
      summary: 'Cancel a background response',
      description:
        'Ends a response created with `background: true` as cancelled (its turn, if running, stops at its next model event) and answers the resource with status `cancelled`. A response created without `background` is 400; one that ended already is 409.',
      responses: {
        200: {
          description: 'The response, cancelled.',
          content: { 'application/json': { schema: answerSchema(ResponseResourceSchema) } },
        },
        ...openResponsesErrorAnswers(400, 401, 404, 409, 500, 503),
      },
    }),
    pathParams(ResponseIdParamsSchema),
    noQuery,
    async (c) =>
      cancelResponse(ctx, c.get('tenant'), c.req.valid('param').id.slice('resp_'.length)),
  )
  routes.delete(
    '/responses/:id',
    operation({
      operationId: 'deleteResponse',
      tags: ['exec'],
      summary: 'Delete a response',
      description:
        'Erases the response and its session as `DELETE /v1/sessions/{id}` does (refused with 409 `session_busy` while its turn runs). Only sessions created by `POST /v1/responses` are responses: others are 404.',
      responses: {
        200: {
          description: 'Deleted.',
          content: { 'application/json': { schema: answerSchema(ResponseDeletedSchema) } },
        },
        ...openResponsesErrorAnswers(400, 401, 404, 409, 500, 503),
      },
    }),
    pathParams(ResponseIdParamsSchema),
    noQuery,
    async (c) => {
      const { id } = c.req.valid('param')
      const sessionId = id.slice('resp_'.length)
      const tenant = c.get('tenant')
      // 404 for a session that is not a response.
      await ctx.api.storedResponseView(tenant, sessionId)
      await ctx.api.deleteSession(tenant, sessionId)
      return c.json({ id, object: 'response', deleted: true })
    },
  )
  return routes
}

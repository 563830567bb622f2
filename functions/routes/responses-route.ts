import { Hono } from 'hono'
import { TurnlineError } from '../../src/contract/errors.ts'
import { ResponsesRequestSchema, toExecBody } from '../../src/contract/open-responses-request.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'

import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { JSON_TYPE, SSE_TYPE, streamHeaders } from '../http/event-framing.ts'
import { errorResponse, mapError } from '../http/http-errors.ts'
import { liveResponse } from '../http/live-stream.ts'
import { rejectQuery, wantsEventStream } from '../http/request-input.ts'
import { readResponse } from './response-read.ts'

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
  routes.post('/responses', async (c) => {
    rejectQuery(c.req.url)
    const request = await validBody(c, ctx, ResponsesRequestSchema)
    const createdAt = Math.floor(Date.now() / 1000)
    const body = toExecBody(request, createdAt)
    const { prompt: _prompt, ...config } = body
    const tenant = c.get('tenant')
    // Built from the config the session stores, so GET /v1/responses/:id answers the same.
    const view = ctx.api.openResponsesView(config)

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
      errorResponse: (error) => errorResponse(error, ctx.log),
      headers: streamHeaders(SSE_TYPE),
    })
  })
  routes.get('/responses/:id', (c) => readResponse(c, ctx))
  return routes
}

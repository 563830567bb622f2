import { Hono } from 'hono'
import { ExecRequestSchema } from '../../src/contract/route-bodies.ts'
import { serializeEvent } from '../../src/contract/serialize.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { bareLine, NDJSON_TYPE, streamHeaders } from '../http/event-framing.ts'
import { errorResponse, mapError } from '../http/http-errors.ts'
import { liveResponse } from '../http/live-stream.ts'
import { rejectQuery } from '../http/request-input.ts'

/**
 * Exec mode, like `vtcode exec --json`: creates a session, runs one turn with the prompt,
 * completes it, and streams bare ThreadEvent lines as they happen, ending at thread.completed.
 * A fault after the stream started is reported as a VT Code `error` event line.
 */
export function execRoute(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post('/exec', async (c) => {
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, ExecRequestSchema)
    const tenant = c.get('tenant')
    let streamed = 0
    return liveResponse({
      run: (push) =>
        ctx.api.exec(tenant, body, {
          onEvent: (event) => {
            streamed += 1
            push(bareLine(event))
          },
        }),
      tail: (result) => result.events.slice(streamed).map(bareLine).join(''),
      failure: (error) => {
        const { message } = mapError(error, ctx.log).body.error
        return `${serializeEvent({ type: 'error', message })}\n`
      },
      errorResponse: (error) => errorResponse(error, ctx.log),
      headers: streamHeaders(NDJSON_TYPE),
    })
  })
  return routes
}

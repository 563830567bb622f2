import { Hono } from 'hono'
import { TurnRequestSchema, type TurnResponse } from '../../src/contract/api.ts'
import { EmptyBodySchema } from '../../src/contract/route-bodies.ts'
import type { TurnOptions } from '../../src/core/session-api.ts'
import { type AppContext, type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import {
  eventFrame,
  JSON_TYPE,
  SSE_TYPE,
  seqOf,
  sseFrame,
  streamHeaders,
  turnResponseJson,
} from '../http/event-framing.ts'
import { errorJson, errorResponse, mapError } from '../http/http-errors.ts'
import { liveResponse } from '../http/live-stream.ts'
import {
  parseIdempotencyKey,
  parseSessionId,
  rejectQuery,
  wantsEventStream,
} from '../http/request-input.ts'

/** `complete` and `cancel` take no fields; an empty body or `{}` is accepted. */

/**
 * Routes that step a session: `POST /sessions/:id/turns`, `/complete`, `/cancel`. Each answers
 * a TurnResponse as JSON, or with `Accept: text/event-stream` streams the turn's events live
 * (`id:` = seq, `event:` = type, `data:` = the bare event) and ends with `event: turn.result`.
 */
export function turnRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()

  routes.post('/sessions/:id/turns', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const idempotencyKey = parseIdempotencyKey(c.req.header('idempotency-key'))
    const body = await validBody(c, ctx, TurnRequestSchema)
    const tenant = c.get('tenant')
    return respond(c, ctx, (options) =>
      ctx.api.stepTurn(tenant, sessionId, body, {
        ...options,
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      }),
    )
  })

  routes.post('/sessions/:id/complete', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    await validBody(c, ctx, EmptyBodySchema)
    const tenant = c.get('tenant')
    return respond(c, ctx, (options) => ctx.api.complete(tenant, sessionId, options))
  })

  routes.post('/sessions/:id/cancel', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    await validBody(c, ctx, EmptyBodySchema)
    const tenant = c.get('tenant')
    return respond(c, ctx, (options) => ctx.api.cancel(tenant, sessionId, options))
  })

  return routes
}

async function respond(
  c: AppContext,
  ctx: RouteContext,
  run: (options: TurnOptions) => Promise<TurnResponse>,
): Promise<Response> {
  if (!wantsEventStream(c.req.header('accept'))) {
    const response = await run({})
    return new Response(turnResponseJson(response), {
      status: 200,
      headers: { 'content-type': JSON_TYPE },
    })
  }
  let lastSeq = -1
  return liveResponse({
    run: (push) =>
      run({
        onEvent: (event, seq) => {
          lastSeq = seq
          push(eventFrame(seq, event))
        },
      }),
    // Events not seen live (an idempotent replay has none) are sent before the result.
    tail: (response) =>
      response.events
        .map((event, i) =>
          seqOf(response, i) > lastSeq ? eventFrame(seqOf(response, i), event) : '',
        )
        .join('') + sseFrame({ event: 'turn.result', data: turnResponseJson(response) }),
    failure: (error) =>
      sseFrame({ event: 'error', data: errorJson(mapError(error, ctx.log).body) }),
    errorResponse: (error) => errorResponse(error, ctx.log),
    headers: streamHeaders(SSE_TYPE),
    heartbeat: { everyMs: ctx.follow.heartbeatMs, chunk: ': keep-alive\n\n' },
  })
}

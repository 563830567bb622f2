import { Hono } from 'hono'
import { TurnRequestSchema, type TurnResponse } from '../../src/contract/api.ts'
import {
  BackgroundAcceptedSchema,
  BackgroundHeadersSchema,
} from '../../src/contract/background-responses.ts'
import { EmptyBodySchema } from '../../src/contract/route-bodies.ts'
import { SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import { TurnResponseSchema } from '../../src/contract/turn-responses.ts'
import type { TurnOptions } from '../../src/core/session-api.ts'
import {
  type AppContext,
  type AppEnv,
  invocationTime,
  type RouteContext,
} from '../http/app-context.ts'
import { acceptedWork, prefersAsync } from '../http/background-answer.ts'
import {
  eventFrame,
  SSE_TYPE,
  seqOf,
  sseFrame,
  streamHeaders,
  turnResponseJson,
} from '../http/event-framing.ts'
import { errorJson, errorResponse, mapError } from '../http/http-errors.ts'
import { jsonResponse } from '../http/json-response.ts'
import { liveResponse } from '../http/live-stream.ts'
import { wantsEventStream } from '../http/request-input.ts'
import { headerParams, jsonBody, noQuery, pathParams } from '../openapi/declared-input.ts'
import {
  answerSchema,
  errorAnswers,
  jsonAnswer,
  operation,
  streamContent,
} from '../openapi/route-docs.ts'

/**
 * Routes that step a session: `POST /sessions/:id/turns`, `/complete`, `/cancel`. Each answers
 * a TurnResponse as JSON, or with `Accept: text/event-stream` streams the turn's events live
 * (`id:` = seq, `event:` = type, `data:` = the bare event) and ends with `event: turn.result`.
 */
export function turnRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()

  routes.post(
    '/sessions/:id/turns',
    operation({
      operationId: 'stepTurn',
      tags: ['turns'],
      summary: 'Step one turn',
      description:
        'Runs the model and tools until the turn ends, waits (a command still runs) or needs an approval. Call again without `input` to continue a waiting turn. With `Idempotency-Key`, a retry answers the first outcome. With `Prefer: respond-async` (where the server runs a worker) the turn is recorded and answered 202 at once; a worker runs it.',
      responses: {
        ...turnAnswers('The outcome of the turn.', 400, 401, 404, 409, 413, 422, 500, 502, 503),
        202: jsonAnswer(
          'With `Prefer: respond-async`: the turn is recorded; `Location` names its status resource.',
          BackgroundAcceptedSchema,
        ),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    headerParams(BackgroundHeadersSchema),
    jsonBody(ctx, TurnRequestSchema, {
      required: false,
      examples: {
        message: { summary: 'A user message', value: { input: 'Add a test for the parser.' } },
        continue: { summary: 'Continue a waiting turn', value: {} },
      },
    }),
    async (c) => {
      const idempotencyKey = c.req.valid('header')['Idempotency-Key']
      const body = c.req.valid('json')
      const sessionId = c.req.valid('param').id
      const tenant = c.get('tenant')
      if (ctx.background && prefersAsync(c.req.valid('header').Prefer)) {
        const options = idempotencyKey === undefined ? {} : { idempotencyKey }
        const queued = await ctx.api.queueTurn(tenant, sessionId, body, options)
        return acceptedWork(tenant, queued, ctx.background)
      }
      return respond(c, ctx, (options) =>
        ctx.api.stepTurn(tenant, sessionId, body, {
          ...options,
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
          ...invocationTime(ctx, c.env),
        }),
      )
    },
  )

  routes.post(
    '/sessions/:id/complete',
    operation({
      operationId: 'completeSession',
      tags: ['turns'],
      summary: 'End the session with success',
      description: 'Commits `thread.completed` (subtype `success`); later turns are 409.',
      responses: turnAnswers('The terminal turn.', 400, 401, 404, 409, 413, 500, 503),
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, EmptyBodySchema, EMPTY_BODY),
    async (c) => {
      const sessionId = c.req.valid('param').id
      const tenant = c.get('tenant')
      return respond(c, ctx, (options) => ctx.api.complete(tenant, sessionId, options))
    },
  )

  routes.post(
    '/sessions/:id/cancel',
    operation({
      operationId: 'cancelSession',
      tags: ['turns'],
      summary: 'End the session as cancelled',
      description:
        'Commits `thread.completed` (subtype `cancelled`), also while a turn runs (it stops at its next step).',
      responses: turnAnswers('The terminal turn.', 400, 401, 404, 409, 413, 500, 503),
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, EmptyBodySchema, EMPTY_BODY),
    async (c) => {
      const sessionId = c.req.valid('param').id
      const tenant = c.get('tenant')
      return respond(c, ctx, (options) => ctx.api.cancel(tenant, sessionId, options))
    },
  )

  return routes
}

/** `complete` and `cancel` take no fields; an empty body or `{}` is accepted. */
const EMPTY_BODY = {
  required: false,
  examples: { empty: { summary: 'No fields', value: {} } },
}

/** A TurnResponse as JSON, or with `Accept: text/event-stream` the turn's events live. */
function turnAnswers(description: string, ...errors: number[]) {
  return {
    200: {
      description,
      content: {
        'application/json': { schema: answerSchema(TurnResponseSchema) },
        'text/event-stream': streamContent(
          'With `Accept: text/event-stream`: one frame per event (`id:` = seq, `event:` = the event type, `data:` = the bare ThreadEvent), then `event: turn.result` with the TurnResponse. A failure after the stream started is an `event: error` frame with the error body.',
          'id: 3\nevent: item.completed\ndata: {"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"Done."}}\n\nevent: turn.result\ndata: {"turn_id":"turn-1","status":"completed","events":[],"next_seq":4}\n\n',
        ),
      },
    },
    ...errorAnswers(...errors),
  }
}

async function respond(
  c: AppContext,
  ctx: RouteContext,
  run: (options: TurnOptions) => Promise<TurnResponse>,
): Promise<Response> {
  if (!wantsEventStream(c.req.header('accept'))) {
    const response = await run({})
    return jsonResponse(turnResponseJson(response))
  }
  let lastSeq = -1
  return liveResponse({
    run: (push) =>
      run({
        onEvent: (event, seq, line) => {
          lastSeq = seq
          push(eventFrame(seq, event, line))
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

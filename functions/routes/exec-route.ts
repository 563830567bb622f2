import { Hono } from 'hono'
import {
  BackgroundAcceptedSchema,
  ExecHeadersSchema,
} from '../../src/contract/background-responses.ts'
import { ExecRequestSchema } from '../../src/contract/route-bodies.ts'
import { serializeEvent } from '../../src/contract/serialize.ts'
import { ThreadEventSchema } from '../../src/contract/thread-event.ts'
import { type LeftOpen, leftOpenMessage } from '../../src/contract/turn-left-open.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { acceptedWork, prefers, prefersAsync } from '../http/background-answer.ts'
import { bareLine, NDJSON_TYPE, streamHeaders } from '../http/event-framing.ts'
import { errorResponse, mapError } from '../http/http-errors.ts'
import { liveResponse } from '../http/live-stream.ts'
import { headerParams, jsonBody, noQuery } from '../openapi/declared-input.ts'
import { answerSchema, errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * Exec mode, like `vtcode exec --json`: creates a session, runs one turn with the prompt,
 * completes it, and streams bare ThreadEvent lines as they happen, ending at thread.completed.
 * A fault after the stream started is reported as a VT Code `error` event line. With
 * `Prefer: keep-alive` a blank line is sent while the run sends nothing (bare `vtcode exec
 * --json` lines have no comment form), so a client can bound the silence it waits. With
 * `Prefer: respond-async` (where a worker runs) the session is created and its turn recorded,
 * answered 202; with an Idempotency-Key the session id derives from the key, so a retry answers
 * the same 202 — and, run in the request, the turn's first outcome, without running it again.
 */
export function execRoute(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/exec',
    operation({
      operationId: 'exec',
      tags: ['exec'],
      summary: 'Exec mode: one prompt, one turn, streamed',
      description:
        "Like `vtcode exec --json`: creates a session, runs one turn with the prompt, completes it, and streams bare ThreadEvent lines as they happen, ending at `thread.completed`. A fault after the stream started is a VT Code `error` event line; so is a turn that did not end (paused before the platform's timeout on AWS Lambda, or waiting), naming the session that `POST /v1/sessions/{id}/turns` without input continues. With `Prefer: respond-async` (where the server runs a worker) the session is created, the run recorded and answered 202; its session ends with the turn.",
      responses: {
        200: {
          description:
            'Bare ThreadEvent lines (NDJSON) as they happen; with `Prefer: keep-alive` (then `Preference-Applied: keep-alive`) also a blank line every 15 s while the run sends nothing.',
          content: { 'application/x-ndjson': { schema: answerSchema(ThreadEventSchema) } },
        },
        202: jsonAnswer(
          'With `Prefer: respond-async`: the run is recorded; `Location` names its status resource.',
          BackgroundAcceptedSchema,
        ),
        ...errorAnswers(400, 401, 413, 422, 500, 502, 503),
      },
    }),
    noQuery,
    headerParams(ExecHeadersSchema),
    jsonBody(ctx, ExecRequestSchema, {
      required: true,
      examples: {
        prompt: {
          summary: 'A prompt in the default workspace',
          value: { prompt: 'List the TODO comments in src/.', model: 'gpt-5-mini' },
        },
      },
    }),
    async (c) => {
      const body = c.req.valid('json')
      const tenant = c.get('tenant')
      const headers = c.req.valid('header')
      if (ctx.background && prefersAsync(headers.Prefer)) {
        const key = headers['Idempotency-Key']
        const queued = await ctx.api.queueExec(tenant, body, key ? { idempotencyKey: key } : {})
        return acceptedWork(tenant, queued, ctx.background)
      }
      let streamed = 0
      const key = headers['Idempotency-Key']
      const keepAlive = prefers(headers.Prefer, 'keep-alive')
      return liveResponse({
        run: (push) =>
          ctx.api.exec(tenant, body, {
            ...(key === undefined ? {} : { idempotencyKey: key }),
            ...invocationTime(ctx, c.env),
            onEvent: (event, _seq, line) => {
              streamed += 1
              push(bareLine(event, line))
            },
          }),
        tail: (result) =>
          result.events
            .slice(streamed)
            .map((event) => bareLine(event))
            .join('') + leftOpenLine(result),
        failure: (error) => {
          const { message } = mapError(error, ctx.log).body.error
          return `${serializeEvent({ type: 'error', message })}\n`
        },
        errorResponse: (error) => errorResponse(error, ctx.log),
        headers: {
          ...streamHeaders(NDJSON_TYPE),
          ...(keepAlive ? { 'preference-applied': 'keep-alive' } : {}),
        },
        ...(keepAlive ? { heartbeat: { everyMs: ctx.follow.heartbeatMs, chunk: '\n' } } : {}),
      })
    },
  )
  return routes
}

/**
 * A run whose turn stayed open (paused before the platform's timeout, or waiting) ends, instead
 * of at `thread.completed`, with a VT Code `error` line naming its session and how to continue.
 */
function leftOpenLine(result: { session_id: string; open?: LeftOpen }): string {
  if (!result.open) return ''
  return `${serializeEvent({ type: 'error', message: leftOpenMessage(result.session_id, result.open) })}\n`
}

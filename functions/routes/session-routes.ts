import { Hono } from 'hono'
import {
  EventsQuerySchema,
  ListSessionsQuerySchema,
  TurnsQuerySchema,
} from '../../src/contract/api.ts'
import {
  LastEventIdHeadersSchema,
  SessionIdParamsSchema,
  WorkspaceParamsSchema,
} from '../../src/contract/route-params.ts'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import {
  CreateSessionResponseSchema,
  SequencedEventSchema,
  SessionListSchema,
  TurnListSchema,
  WorkspaceListSchema,
} from '../../src/contract/session-responses.ts'
import { SessionViewSchema } from '../../src/contract/session-view-response.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { eventFeedResponse } from '../http/event-feed.ts'
import { jsonResponse } from '../http/json-response.ts'
import { wantsEventStream } from '../http/request-input.ts'
import { followMsFor } from '../http/request-time-left.ts'
import {
  headerParams,
  jsonBody,
  noQuery,
  pathParams,
  queryParams,
} from '../openapi/declared-input.ts'
import {
  answerSchema,
  errorAnswers,
  jsonAnswer,
  operation,
  streamContent,
} from '../openapi/route-docs.ts'

const json = (value: unknown, status = 200) => jsonResponse(JSON.stringify(value), status)

const sse = (c: { req: { header: (name: string) => string | undefined } }) =>
  wantsEventStream(c.req.header('accept'))

/** Create, list and read sessions, and the events feed of one session. */
export function sessionRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()

  routes.post(
    '/sessions',
    operation({
      operationId: 'createSession',
      tags: ['sessions'],
      summary: 'Create a session',
      description:
        'Commits `thread.started`. Every field is optional: a bare POST creates a session in the `default` workspace with the deployment defaults.',
      responses: {
        201: jsonAnswer('The session was created.', CreateSessionResponseSchema),
        ...errorAnswers(400, 401, 413, 500, 503),
      },
    }),
    noQuery,
    jsonBody(ctx, SessionConfigSchema, {
      required: false,
      examples: {
        minimal: { summary: 'Defaults everywhere', value: {} },
        coding: {
          summary: 'A coding session with a model and limits',
          value: {
            workspace: 'my-repo',
            model: 'gpt-5-mini',
            instructions: 'Keep changes small and run the tests.',
            limits: { max_turns: 20 },
          },
        },
      },
    }),
    async (c) => {
      // Its session_start hooks stop before the platform's timeout (Lambda), as a turn's do.
      const options = invocationTime(ctx, c.env)
      return json(await ctx.api.createSession(c.get('tenant'), c.req.valid('json'), options), 201)
    },
  )

  routes.get(
    '/sessions',
    operation({
      operationId: 'listSessions',
      tags: ['sessions'],
      summary: "List the tenant's sessions of one workspace",
      description:
        'One page, newest first; pass the opaque `cursor` back for the next page (a forged cursor is 400).',
      responses: {
        200: jsonAnswer('One page of sessions.', SessionListSchema),
        ...errorAnswers(400, 401, 500, 503),
      },
    }),
    queryParams(ListSessionsQuerySchema),
    async (c) => json(await ctx.api.listSessions(c.get('tenant'), c.req.valid('query'))),
  )

  routes.get(
    '/workspaces',
    operation({
      operationId: 'listWorkspaces',
      tags: ['sessions'],
      summary: "List the tenant's workspaces",
      description:
        'Every workspace of the tenant, in name order, with its number of sessions (a workspace with artifacts only counts 0).',
      responses: {
        200: jsonAnswer("The tenant's workspaces.", WorkspaceListSchema),
        ...errorAnswers(401, 500, 503),
      },
    }),
    async (c) => json(await ctx.api.listWorkspaces(c.get('tenant'))),
  )

  routes.delete(
    '/workspaces/:workspace',
    operation({
      operationId: 'deleteWorkspace',
      tags: ['sessions'],
      summary: 'Delete a workspace: every session and artifact of it',
      description:
        'Erases each session of the workspace as `DELETE /v1/sessions/{id}` does, then every other object of the workspace (durable artifacts, exports). A session whose turn runs is left and the call answers 409 `session_busy` once the others are gone; the next call finishes. A workspace with nothing in it is 404.',
      responses: {
        204: { description: 'Deleted.' },
        ...errorAnswers(400, 401, 404, 409, 500, 503),
      },
    }),
    pathParams(WorkspaceParamsSchema),
    noQuery,
    async (c) => {
      await ctx.api.deleteWorkspace(c.get('tenant'), c.req.valid('param').workspace)
      return c.body(null, 204)
    },
  )

  routes.get(
    '/sessions/:id',
    operation({
      operationId: 'getSession',
      tags: ['sessions'],
      summary: 'Read one session',
      description: 'Its manifest summary, usage, cost, config and budget report.',
      responses: {
        200: jsonAnswer('The session.', SessionViewSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    async (c) => json(await ctx.api.getSession(c.get('tenant'), c.req.valid('param').id)),
  )

  routes.delete(
    '/sessions/:id',
    operation({
      operationId: 'deleteSession',
      tags: ['sessions'],
      summary: 'Delete a session and everything of it',
      description:
        'Erases the session: its log, checkpoints, manifest, index, exports, pending intents and coordinator state; afterwards every read is 404 and no listing names it. Refused with 409 `session_busy` (Retry-After) while a turn runs: cancel it or wait. A call cut short midway is finished by the next one; a session already deleted is 404.',
      responses: {
        204: { description: 'Deleted.' },
        ...errorAnswers(400, 401, 404, 409, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    async (c) => {
      await ctx.api.deleteSession(c.get('tenant'), c.req.valid('param').id)
      return c.body(null, 204)
    },
  )

  routes.get(
    '/sessions/:id/turns',
    operation({
      operationId: 'listSessionTurns',
      tags: ['sessions'],
      summary: "List a session's turns with what each was asked",
      description:
        "The session's turns in order, each with the seq of its `turn.started` and its recorded input: the `input` as the turn request gave it (text or `input_text`/`input_image` parts) and the follow-ups it applied. Turnline's own record, kept beside VT Code's events (which carry no user text). Pages of `limit`; pass `cursor` back for the next.",
      responses: {
        200: jsonAnswer('One page of turns.', TurnListSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    queryParams(TurnsQuerySchema),
    async (c) =>
      json(await ctx.api.listTurns(c.get('tenant'), c.req.valid('param').id, c.req.valid('query'))),
  )

  routes.get(
    '/sessions/:id/events',
    operation({
      operationId: 'listSessionEvents',
      tags: ['sessions'],
      summary: 'Read the events of a session',
      description:
        'Events with seq > `after`, as NDJSON (one SequencedEvent per line) or, with `Accept: text/event-stream`, as Server-Sent Events. `follow=1` keeps the stream open until `thread.completed` (or the follow limit); a tenant may hold 64 followed streams open at once on all instances (`TURNLINE_MAX_FOLLOWED_STREAMS`; 429 past that). The `Turnline-Next-Seq` header names the seq after the first page.',
      responses: {
        200: {
          description: 'The events from `after` on.',
          headers: {
            'Turnline-Next-Seq': {
              description: 'The seq after the events of the first page.',
              schema: { type: 'integer' },
            },
          },
          content: {
            'application/x-ndjson': {
              schema: answerSchema(SequencedEventSchema),
            },
            'text/event-stream': streamContent(
              '`id:` = seq, `event:` = event type, `data:` = the bare ThreadEvent.',
              'id: 0\nevent: thread.started\ndata: {"type":"thread.started","thread_id":"th_1"}\n\n',
            ),
          },
        },
        ...errorAnswers(400, 401, 404, 429, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    queryParams(EventsQuerySchema),
    headerParams(LastEventIdHeadersSchema, sse),
    async (c) => {
      const query = c.req.valid('query')
      const streaming = sse(c)
      return eventFeedResponse({
        api: ctx.api,
        tenant: c.get('tenant'),
        sessionId: c.req.valid('param').id,
        after: c.req.valid('header')['Last-Event-ID'] ?? query.after ?? -1,
        limit: query.limit,
        follow: query.follow === '1' || query.follow === 'true',
        sse: streaming,
        options: { ...ctx.follow, maxMs: followMsFor(ctx.follow, c.env) },
        followed: ctx.followed,
        log: ctx.log,
      })
    },
  )

  return routes
}

import { Hono } from 'hono'
import { EventsQuerySchema, ListSessionsQuerySchema } from '../../src/contract/api.ts'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { eventFeedResponse } from '../http/event-feed.ts'
import { JSON_TYPE } from '../http/event-framing.ts'
import {
  parseLastEventId,
  parseQuery,
  parseSessionId,
  rejectQuery,
  wantsEventStream,
} from '../http/request-input.ts'

const json = (value: unknown, status = 200) =>
  new Response(JSON.stringify(value), { status, headers: { 'content-type': JSON_TYPE } })

/** Create, list and read sessions, and the events feed of one session. */
export function sessionRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()

  routes.post('/sessions', async (c) => {
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, SessionConfigSchema)
    const created = await ctx.api.createSession(c.get('tenant'), body)
    return json(created, 201)
  })

  routes.get('/sessions', async (c) => {
    const query = parseQuery(ListSessionsQuerySchema, c.req.url)
    return json(await ctx.api.listSessions(c.get('tenant'), query))
  })

  routes.get('/sessions/:id', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    return json(await ctx.api.getSession(c.get('tenant'), sessionId))
  })

  routes.get('/sessions/:id/events', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    const query = parseQuery(EventsQuerySchema, c.req.url)
    const sse = wantsEventStream(c.req.header('accept'))
    const resumeAfter = sse ? parseLastEventId(c.req.header('last-event-id')) : undefined
    return eventFeedResponse({
      api: ctx.api,
      tenant: c.get('tenant'),
      sessionId,
      after: resumeAfter ?? query.after ?? -1,
      limit: query.limit,
      follow: query.follow === '1' || query.follow === 'true',
      sse,
      options: ctx.follow,
      log: ctx.log,
    })
  })

  return routes
}

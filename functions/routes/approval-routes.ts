import { Hono } from 'hono'
import { PermissionResolutionRequestSchema } from '../../src/contract/permission-resolution.ts'
import { PlanApprovalRequestSchema } from '../../src/contract/plan-approval.ts'
import { ForkRequestSchema } from '../../src/contract/route-bodies.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { JSON_TYPE, turnResponseJson } from '../http/event-framing.ts'
import { parseSessionId, rejectQuery } from '../http/request-input.ts'

/**
 * `POST /sessions/:id/permissions {tool_name, decision, message?}`: the human answer to a turn
 * that stopped `awaiting_approval`. Answers a TurnResponse (status `waiting`) holding
 * `permission.resolved`; the next turn without input continues the tool loop.
 * `POST /sessions/:id/plan-approval {decision, feedback?}`: answers a waiting plan (TurnResponse
 * of the build or planning turn it starts, or of the recorded decision).
 * `POST /sessions/:id/fork`: 201 with the new session, seeded with the summarized history.
 */
/** A fork is a sub-agent: `isolation: "worktree"` runs its sandbox in a git worktree. */

export function approvalRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post('/sessions/:id/permissions', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, PermissionResolutionRequestSchema)
    const response = await ctx.api.resolvePermission(c.get('tenant'), sessionId, body)
    return new Response(turnResponseJson(response), { headers: { 'content-type': JSON_TYPE } })
  })
  routes.post('/sessions/:id/plan-approval', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, PlanApprovalRequestSchema)
    const response = await ctx.api.approvePlan(c.get('tenant'), sessionId, body)
    return new Response(turnResponseJson(response), { headers: { 'content-type': JSON_TYPE } })
  })

  routes.post('/sessions/:id/fork', async (c) => {
    const sessionId = parseSessionId(c.req.param('id'))
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, ForkRequestSchema)
    return c.json(await ctx.api.fork(c.get('tenant'), sessionId, body), 201)
  })
  return routes
}

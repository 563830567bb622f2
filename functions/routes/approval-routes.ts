import { Hono } from 'hono'
import { PermissionResolutionRequestSchema } from '../../src/contract/permission-resolution.ts'
import { PlanApprovalRequestSchema } from '../../src/contract/plan-approval.ts'
import { ForkRequestSchema } from '../../src/contract/route-bodies.ts'
import { SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import { ForkResponseSchema } from '../../src/contract/session-responses.ts'
import { TurnResponseSchema } from '../../src/contract/turn-responses.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { turnResponseJson } from '../http/event-framing.ts'
import { jsonResponse } from '../http/json-response.ts'
import { jsonBody, noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * `POST /sessions/:id/permissions {tool_name, decision, message?}`: the human answer to a turn
 * that stopped `awaiting_approval`. Answers a TurnResponse (status `waiting`) holding
 * `permission.resolved`; the next turn without input continues the tool loop.
 * `POST /sessions/:id/plan-approval {decision, feedback?}`: answers a waiting plan (TurnResponse
 * of the build or planning turn it starts, or of the recorded decision).
 * `POST /sessions/:id/fork`: 201 with the new session, seeded with the summarized history; a
 * fork is a sub-agent: `isolation: "worktree"` runs its sandbox in a git worktree.
 */
export function approvalRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const turnJson = (response: Parameters<typeof turnResponseJson>[0]) =>
    jsonResponse(turnResponseJson(response))

  routes.post(
    '/sessions/:id/permissions',
    operation({
      operationId: 'resolvePermission',
      tags: ['steering'],
      summary: 'Answer a tool call waiting for approval',
      description:
        'The human answer to a turn that stopped `awaiting_approval`. The answer (status `waiting`) holds `permission.resolved`; the next turn without input continues the tool loop. A `followup` `message` over the inline limit is kept whole as an artifact of the session and the model reads a preview naming it (413 / 429 over the caps of output artifacts, as a long turn input).',
      responses: {
        200: jsonAnswer('Status `waiting`; events: `permission.resolved`.', TurnResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 429, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, PermissionResolutionRequestSchema, {
      required: true,
      examples: {
        allow: {
          summary: 'Allow the call',
          value: { tool_name: 'exec_command', decision: 'allow' },
        },
        followup: {
          summary: 'Answer the model instead',
          value: {
            tool_name: 'exec_command',
            decision: 'followup',
            message: 'Run the unit tests only.',
          },
        },
      },
    }),
    async (c) =>
      turnJson(
        await ctx.api.resolvePermission(
          c.get('tenant'),
          c.req.valid('param').id,
          c.req.valid('json'),
        ),
      ),
  )

  routes.post(
    '/sessions/:id/plan-approval',
    operation({
      operationId: 'approvePlan',
      tags: ['steering'],
      summary: 'Answer a plan waiting for approval',
      description:
        'Executing decisions (`execute`, `auto_accept`, `fresh_context`, `switch_build`, `switch_auto`) run the build turn; `revise` runs a planning turn with the feedback; `cancel` records the decision.',
      responses: {
        200: jsonAnswer('The turn the decision started (or recorded).', TurnResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 422, 500, 502, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, PlanApprovalRequestSchema, {
      required: true,
      examples: {
        execute: { summary: 'Build the plan', value: { decision: 'execute' } },
        revise: {
          summary: 'Ask for changes',
          value: { decision: 'revise', feedback: 'Split step 2 into two commits.' },
        },
      },
    }),
    async (c) =>
      turnJson(
        await ctx.api.approvePlan(c.get('tenant'), c.req.valid('param').id, c.req.valid('json')),
      ),
  )

  routes.post(
    '/sessions/:id/fork',
    operation({
      operationId: 'forkSession',
      tags: ['steering'],
      summary: 'Fork a session',
      description:
        'A new session seeded with the summarized history; the source is untouched. A fork is a sub-agent: `isolation: "worktree"` runs its sandbox in a git worktree.',
      responses: {
        201: jsonAnswer('The new session.', ForkResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 500, 502, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, ForkRequestSchema, {
      required: false,
      examples: {
        plain: { summary: 'Same sandbox', value: {} },
        worktree: { summary: 'Own git worktree', value: { isolation: 'worktree' } },
      },
    }),
    async (c) =>
      c.json(
        await ctx.api.fork(c.get('tenant'), c.req.valid('param').id, c.req.valid('json')),
        201,
      ),
  )
  return routes
}

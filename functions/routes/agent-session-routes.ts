import { Hono } from 'hono'
import {
  HandoffResponseSchema,
  OrientationViewSchema,
  VerifyResponseSchema,
} from '../../src/contract/agent-session-responses.ts'
import { HandoffRouteRequestSchema } from '../../src/contract/handoff-request.ts'
import { OrientationQuerySchema } from '../../src/contract/orientation-view.ts'
import { IdempotencyHeadersSchema, SessionIdParamsSchema } from '../../src/contract/route-params.ts'
import { VerifyRequestSchema } from '../../src/contract/verification.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { turnResponseJson } from '../http/event-framing.ts'
import { jsonResponse } from '../http/json-response.ts'
import {
  headerParams,
  jsonBody,
  noQuery,
  pathParams,
  queryParams,
} from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * The agent layer on one session: its orientation (`GET …/orientation[?preview=1]`), the
 * handoff to the next agent (`POST …/handoff`) and the verification of a proposed change
 * (`POST …/verify`).
 */
export function agentSessionRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/sessions/:id/orientation',
    operation({
      operationId: 'getOrientation',
      tags: ['agents'],
      summary: "Read a session's orientation context",
      description:
        'The `[Orientation Context]` frozen into the current request segment; `?preview=1` also builds the one a new orient phase would freeze now.',
      responses: {
        200: jsonAnswer('The orientation.', OrientationViewSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    queryParams(OrientationQuerySchema),
    async (c) => {
      const { preview } = c.req.valid('query')
      const view = await ctx.api.getOrientation(c.get('tenant'), c.req.valid('param').id, {
        preview: preview === '1' || preview === 'true',
      })
      return c.json(view)
    },
  )
  routes.post(
    '/sessions/:id/handoff',
    operation({
      operationId: 'handoffSession',
      tags: ['agents'],
      summary: 'Hand the session off to the next agent',
      description:
        "The session's HandoffRequest (state, boundary status, modified files, last test run, open decisions, known issues, next actions, task), stored as the workspace's current handoff. `start: true` starts the next agent's session with it (201); `end_source: true` ends this one `handed_off`. With `Idempotency-Key`, a retry answers the session the first call started.",
      responses: {
        201: jsonAnswer('A next session was started.', HandoffResponseSchema),
        200: jsonAnswer('The handoff (no new session).', HandoffResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    headerParams(IdempotencyHeadersSchema),
    jsonBody(ctx, HandoffRouteRequestSchema, {
      required: false,
      examples: {
        derived: { summary: 'Everything derived from the session', value: {} },
        start: {
          summary: 'Start the next agent and end this session',
          value: {
            target_agent: 'reviewer',
            next_actions: ['Review the parser change'],
            start: true,
            end_source: true,
          },
        },
      },
    }),
    async (c) => {
      const idempotencyKey = c.req.valid('header')['Idempotency-Key']
      const response = await ctx.api.handoff(
        c.get('tenant'),
        c.req.valid('param').id,
        c.req.valid('json'),
        { ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) },
      )
      return c.json(response, response.session && !response.session.duplicate ? 201 : 200)
    },
  )
  routes.post(
    '/sessions/:id/verify',
    operation({
      operationId: 'verifyChange',
      tags: ['agents'],
      summary: 'Verify a proposed change with a separate verifier',
      description:
        "Hands a proposed change (a turn's file changes, or paths) to a read-only verifier sub-agent without the proposer's context. The verdict is a harness item (`verification_started`, then `verification_passed` or `verification_failed`) in this session's stream, and a rejection is what its next turn starts with.",
      responses: {
        200: jsonAnswer("The proposer's committed events and the verdict.", VerifyResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 422, 500, 502, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    noQuery,
    jsonBody(ctx, VerifyRequestSchema, {
      required: false,
      examples: {
        latest: { summary: 'The newest turn that changed files', value: {} },
        paths: {
          summary: 'Named files with the intent',
          value: { paths: ['src/parser.ts'], description: 'Handle empty input without throwing.' },
        },
      },
    }),
    async (c) => {
      const { verification, ...turn } = await ctx.api.verify(
        c.get('tenant'),
        c.req.valid('param').id,
        c.req.valid('json'),
      )
      // The proposer's events as in every turn answer, byte for byte, plus the verdict.
      const text = `${turnResponseJson(turn).slice(0, -1)},"verification":${JSON.stringify(verification)}}`
      return jsonResponse(text)
    },
  )
  return routes
}

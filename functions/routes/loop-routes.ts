import { Hono } from 'hono'
import { LoopStepResponseSchema, LoopViewSchema } from '../../src/contract/api-responses.ts'
import { LoopCreateRequestSchema, LoopStepRequestSchema } from '../../src/contract/loop-state.ts'
import { LoopIdParamsSchema } from '../../src/contract/route-params.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { jsonBody, noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * Loop runs: `POST /loops` creates one (its state at `.vtcode/state/loop-<id>.json`),
 * `GET /loops/:id` reads it, `POST /loops/:id/step` runs or resumes the next step (or pauses,
 * resumes, completes, fails it, or changes its budget).
 */
export function loopRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/loops',
    operation({
      operationId: 'createLoop',
      tags: ['loops'],
      summary: 'Create a loop run',
      description:
        'A task, the settings of each step session, and a budget (VT Code CostBudget defaults: 1,000,000 tokens, $10, 50 steps). Its state lives at `.vtcode/state/loop-<id>.json`.',
      responses: {
        201: jsonAnswer('The loop.', LoopViewSchema),
        ...errorAnswers(400, 401, 409, 413, 500, 503),
      },
    }),
    noQuery,
    jsonBody(ctx, LoopCreateRequestSchema, {
      required: true,
      examples: {
        task: {
          summary: 'A task with a small budget',
          value: {
            task: 'Make every test in test/unit pass.',
            session: { workspace: 'my-repo' },
            budget: { max_steps: 5, max_cost_usd: 1 },
          },
        },
      },
    }),
    async (c) => c.json(await ctx.api.createLoop(c.get('tenant'), c.req.valid('json')), 201),
  )
  routes.get(
    '/loops/:id',
    operation({
      operationId: 'getLoop',
      tags: ['loops'],
      summary: 'Read a loop run',
      description: 'Step index, cumulative tokens and cost, status and budget report.',
      responses: {
        200: jsonAnswer('The loop.', LoopViewSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(LoopIdParamsSchema),
    noQuery,
    async (c) => c.json(await ctx.api.getLoop(c.get('tenant'), c.req.valid('param').id)),
  )
  routes.post(
    '/loops/:id/step',
    operation({
      operationId: 'stepLoop',
      tags: ['loops'],
      summary: 'Run the next step of a loop, or control it',
      description:
        'Runs (or resumes) the next step — a fresh session oriented from the artifacts — or pauses, resumes, completes or fails the loop, or changes its budget.',
      responses: {
        200: jsonAnswer('The loop and the step.', LoopStepResponseSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 422, 500, 502, 503),
      },
    }),
    pathParams(LoopIdParamsSchema),
    noQuery,
    jsonBody(ctx, LoopStepRequestSchema, {
      required: false,
      examples: {
        step: { summary: 'Run the next step', value: {} },
        pause: { summary: 'Pause the loop', value: { control: 'pause' } },
      },
    }),
    async (c) =>
      c.json(await ctx.api.stepLoop(c.get('tenant'), c.req.valid('param').id, c.req.valid('json'))),
  )
  return routes
}

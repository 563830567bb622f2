import { Hono } from 'hono'
import {
  BackgroundHeadersSchema,
  LoopRunAcceptedSchema,
  LoopStepAcceptedSchema,
  WorkStatusSchema,
} from '../../src/contract/background-responses.ts'
import { LoopStepResponseSchema, LoopViewSchema } from '../../src/contract/loop-responses.ts'
import {
  LoopCreateRequestSchema,
  LoopRunRequestSchema,
  LoopStepRequestSchema,
} from '../../src/contract/loop-state.ts'
import {
  IdempotencyHeadersSchema,
  LoopIdParamsSchema,
  LoopWorkParamsSchema,
} from '../../src/contract/route-params.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { acceptedLoopStep, prefersAsync } from '../http/background-answer.ts'
import { acceptedLoopRun, requireWorker, wakeRun } from '../http/loop-run-answer.ts'
import { headerParams, jsonBody, noQuery, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * Loop runs: `POST /loops` creates one (its state at `.vtcode/state/loop-<id>.json`),
 * `GET /loops/:id` reads it, `POST /loops/:id/step` runs or resumes the next step (or pauses,
 * resumes, completes, fails it, or changes its budget); a step may be recorded for the background
 * (`Prefer: respond-async`), followed at `GET /loops/:id/work/:work_id`.
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
    async (c) => {
      const tenant = c.get('tenant')
      const body = c.req.valid('json')
      if (!body.autorun) return c.json(await ctx.api.createLoop(tenant, body), 201)
      const worker = requireWorker(ctx)
      const run = await ctx.api.createRunningLoop(tenant, body)
      await wakeRun(tenant, run.work, worker)
      return c.json(run.loop, 201)
    },
  )
  routes.post(
    '/loops/:id/run',
    operation({
      operationId: 'runLoop',
      tags: ['loops'],
      summary: 'Run a loop to its end in the background',
      description:
        "Starts a background run where the server runs a worker: each step is recorded and run like a background step, one after the other, until the loop completes, fails, is paused, reaches its budget, or a step needs a person (an approval, a command's client, a required verification) — then the run stops (`run.stop_reason`) and a `loop.stopped` callback goes out. A run already running is answered again (`duplicate: true`; its step is recorded again if a crash lost it). 409 for a completed, failed or paused loop, and where no worker runs.",
      responses: {
        202: jsonAnswer('The run is on; `Location` names the loop.', LoopRunAcceptedSchema),
        ...errorAnswers(400, 401, 404, 409, 413, 422, 500, 503),
      },
    }),
    pathParams(LoopIdParamsSchema),
    noQuery,
    headerParams(IdempotencyHeadersSchema),
    jsonBody(ctx, LoopRunRequestSchema, {
      required: false,
      examples: { run: { summary: 'Run the loop to its end', value: {} } },
    }),
    async (c) => {
      const tenant = c.get('tenant')
      const loopId = c.req.valid('param').id
      const worker = requireWorker(ctx)
      const key = c.req.valid('header')['Idempotency-Key']
      const run = await ctx.api.runLoop(tenant, loopId, {
        trigger: 'api',
        ...(key === undefined ? {} : { idempotencyKey: key }),
      })
      await wakeRun(tenant, run.work, worker)
      return acceptedLoopRun(loopId, run)
    },
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
        'Runs (or resumes) the next step — a fresh session oriented from the artifacts — or pauses, resumes, completes or fails the loop, or changes its budget. A step (no `control`, no `budget`) with `Prefer: respond-async`, where the server runs a worker, is recorded and answered 202; the worker runs the step that was next then, once.',
      responses: {
        200: jsonAnswer('The loop and the step.', LoopStepResponseSchema),
        202: jsonAnswer(
          'With `Prefer: respond-async`: the step is recorded; `Location` names its status.',
          LoopStepAcceptedSchema,
        ),
        ...errorAnswers(400, 401, 404, 409, 413, 422, 500, 502, 503),
      },
    }),
    pathParams(LoopIdParamsSchema),
    noQuery,
    headerParams(BackgroundHeadersSchema),
    jsonBody(ctx, LoopStepRequestSchema, {
      required: false,
      examples: {
        step: { summary: 'Run the next step', value: {} },
        pause: { summary: 'Pause the loop', value: { control: 'pause' } },
      },
    }),
    async (c) => {
      const tenant = c.get('tenant')
      const loopId = c.req.valid('param').id
      const body = c.req.valid('json')
      const headers = c.req.valid('header')
      const step = body.control === undefined && body.budget === undefined
      if (ctx.background && step && prefersAsync(headers.Prefer)) {
        const key = headers['Idempotency-Key']
        const options = key === undefined ? {} : { idempotencyKey: key }
        const queued = await ctx.api.queueLoopStep(tenant, loopId, body, options)
        return acceptedLoopStep(tenant, loopId, queued, ctx.background)
      }
      const options = step ? invocationTime(ctx, c.env) : {}
      return c.json(await ctx.api.stepLoop(tenant, loopId, body, options))
    },
  )
  routes.get(
    '/loops/:id/work/:work_id',
    operation({
      operationId: 'getLoopWork',
      tags: ['loops'],
      summary: 'Where a background loop step stands',
      description:
        'Queued, running or failed (with the error), from its record; once the step ran the record is gone (404) and the loop shows the step.',
      responses: {
        200: jsonAnswer('The pending step.', WorkStatusSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(LoopWorkParamsSchema),
    noQuery,
    async (c) => {
      const { id, work_id } = c.req.valid('param')
      return c.json(await ctx.api.loopWorkStatus(c.get('tenant'), id, work_id))
    },
  )
  return routes
}

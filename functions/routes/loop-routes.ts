import { Hono } from 'hono'
import { TurnlineError } from '../../src/contract/errors.ts'
import {
  LOOP_ID,
  LoopCreateRequestSchema,
  LoopStepRequestSchema,
} from '../../src/contract/loop-state.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { rejectQuery } from '../http/request-input.ts'

function parseLoopId(value: string | undefined): string {
  if (value === undefined || !LOOP_ID.test(value)) {
    throw new TurnlineError(
      'invalid_input',
      `loop id ${JSON.stringify((value ?? '').slice(0, 80))} is not valid: use 1–64 characters from A-Z a-z 0-9 _ -`,
      { details: { field: 'path.id' } },
    )
  }
  return value
}

/**
 * Loop runs: `POST /loops` creates one (its state at `.vtcode/state/loop-<id>.json`),
 * `GET /loops/:id` reads it, `POST /loops/:id/step` runs or resumes the next step (or pauses,
 * resumes, completes, fails it, or changes its budget).
 */
export function loopRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post('/loops', async (c) => {
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, LoopCreateRequestSchema)
    return c.json(await ctx.api.createLoop(c.get('tenant'), body), 201)
  })
  routes.get('/loops/:id', async (c) => {
    const loopId = parseLoopId(c.req.param('id'))
    rejectQuery(c.req.url)
    return c.json(await ctx.api.getLoop(c.get('tenant'), loopId))
  })
  routes.post('/loops/:id/step', async (c) => {
    const loopId = parseLoopId(c.req.param('id'))
    rejectQuery(c.req.url)
    const body = await validBody(c, ctx, LoopStepRequestSchema)
    return c.json(await ctx.api.stepLoop(c.get('tenant'), loopId, body))
  })
  return routes
}

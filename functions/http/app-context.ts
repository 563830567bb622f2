import type { Context } from 'hono'
import type * as z from 'zod'
import type { SessionApi } from '../../src/core/session-api.ts'
import type { WorkTrigger } from '../background/work-trigger.ts'
import type { FollowOptions } from './event-feed.ts'
import type { FollowedStreams } from './followed-streams.ts'
import type { ErrorLog } from './http-errors.ts'
import { type BodyLimits, readJsonBody } from './read-body.ts'
import { parseInput } from './request-input.ts'
import type { RequestTimeLeft } from './request-time-left.ts'

/** What every route handler shares. */
export interface RouteContext {
  api: SessionApi
  limits: BodyLimits
  follow: FollowOptions
  /** The followed streams each tenant holds open in this process (a bound per tenant). */
  followed: FollowedStreams
  log: ErrorLog
  /**
   * The process's background worker, where the runtime has one (Node): requests that prefer
   * `respond-async` and webhook deliveries are recorded and answered 202. Without it they run
   * in the request, as before.
   */
  background?: WorkTrigger
  /**
   * The platform's bound on a request (Lambda's timeout), from the bindings the entry hands the
   * app: a turn run in the request pauses before it (`TurnOptions.timeLeft`).
   */
  timeLeft?: RequestTimeLeft
}

/**
 * The option that holds a turn run in the request to the platform's bound (Lambda's timeout):
 * the turn pauses, open, before the invocation's time runs out. None where the platform has no
 * bound.
 */
export function invocationTime(
  ctx: RouteContext,
  env: unknown,
): { timeLeft?: () => number | undefined } {
  const { timeLeft } = ctx
  return timeLeft ? { timeLeft: () => timeLeft(env) } : {}
}

/** Hono environment of the app: the authenticated tenant is set on every /v1 request. */
export type AppEnv = { Variables: { tenant: string } }

export type AppContext = Context<AppEnv>

/**
 * The request body, validated by `schema`. An empty body stands for `{}`, so routes whose
 * fields are all optional accept a bare POST.
 */
export async function validBody<S extends z.ZodType>(
  c: AppContext,
  ctx: RouteContext,
  schema: S,
): Promise<z.output<S>> {
  const value = await readJsonBody(c.req.raw, ctx.limits)
  return parseInput(schema, value === undefined ? {} : value, 'body')
}

import type { MiddlewareHandler } from 'hono'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { WindowVerdict } from '../../src/ports/tenant-limiter.ts'
import type { AppEnv } from '../http/app-context.ts'
import type { ErrorLog } from '../http/http-errors.ts'
import { errorAnswerFor } from '../http/open-responses-errors.ts'
import { limitsOf, rateLimited, type Tenancy, windowHeaders } from './tenancy.ts'

/**
 * After authentication on every /v1 route: counts the request for the tenant's day and, when
 * the tenant has a request limit, in its sliding one-minute window. Over the limit the answer is
 * 429 `rate_limited` with Retry-After; every answer to a limited tenant carries
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`. `GET /v1/usage` is exempt.
 * When the counters cannot be reached the request passes (logged).
 */
export function requestLimit(tenancy: Tenancy, log: ErrorLog): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Reading one's usage neither counts nor is refused (as GitHub's /rate_limit).
    if (c.req.path === '/v1/usage') return next()
    const verdict = await countRequest(tenancy, c.get('tenant'), log)
    if (verdict === undefined) return next()
    const now = tenancy.clock.now()
    const headers = windowHeaders(verdict, now)
    if (!verdict.allowed) {
      const refused = errorAnswerFor(c.req.path)(rateLimited(verdict, now), log)
      for (const [name, value] of Object.entries(headers)) refused.headers.set(name, value)
      return refused
    }
    await next()
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value)
  }
}

/**
 * Counts one request of `tenant` (an HTTP request, a WebSocket's `response.create`): the
 * window's verdict, or undefined when the tenant has no request limit or the counters cannot be
 * reached (the request passes, logged).
 */
export async function countRequest(
  tenancy: Tenancy,
  tenant: string,
  log: ErrorLog,
): Promise<WindowVerdict | undefined> {
  try {
    return await tenancy.limiter.hit(tenant, limitsOf(tenancy, tenant).requestsPerMinute)
  } catch (error) {
    if (!isTurnlineError(error, 'coordinator_unavailable')) throw error
    // Fail open, as @upstash/ratelimit does on a timeout: an outage of the counters does not
    // stop requests that need no coordinator (turns still do, and fail on their own).
    log({ level: 'warn', msg: 'request limit unavailable; request let through', tenant })
    return undefined
  }
}

import { Hono } from 'hono'
import { type UsageReport, UsageReportSchema } from '../../src/contract/tenancy.ts'
import { toMicroUsd } from '../../src/shared/micro-usd.ts'
import { dayEndMs } from '../../src/shared/utc-day.ts'
import type { AppEnv } from '../http/app-context.ts'
import { jsonResponse } from '../http/json-response.ts'
import { noQuery } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation, RATE_LIMIT_HEADERS } from '../openapi/route-docs.ts'
import { limitsOf, type Tenancy, windowHeaders } from '../tenancy/tenancy.ts'

/**
 * `GET /usage`: the calling tenant's usage today (UTC) against its limits: requests (today, and
 * in the current one-minute window), running turns, model tokens and estimated cost (with what
 * model calls in flight hold of them), tool output kept as output artifacts. A limit
 * that does not apply is `null` (and so is its `remaining`). The call itself is not counted
 * and never refused for the request limit.
 */
export function usageRoute(tenancy: Tenancy): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/usage',
    operation({
      operationId: 'getUsage',
      tags: ['meta'],
      summary: "The calling tenant's usage and limits",
      description:
        "The tenant's usage today (UTC): requests, running turns, model tokens, estimated cost and tool output kept as output artifacts, each against its limit (`null`: none). The call itself is not counted and never refused for the request limit. Served when the deployment has per-tenant limits (TURNLINE_LIMIT_* or the key registry).",
      responses: {
        200: jsonAnswer('The usage report.', UsageReportSchema, RATE_LIMIT_HEADERS),
        ...errorAnswers(400, 401, 500, 503),
      },
    }),
    noQuery,
    async (c) => {
      const tenant = c.get('tenant')
      const limits = limitsOf(tenancy, tenant)
      const { limiter } = tenancy
      const [today, active, window] = await Promise.all([
        limiter.usageToday(tenant),
        limiter.activeSlots(tenant),
        limits.requestsPerMinute === undefined
          ? undefined
          : limiter.peekWindow(tenant, limits.requestsPerMinute),
      ])
      const now = tenancy.clock.now()
      const costUsd = today.costMicroUsd / 1_000_000
      const costLimitMicro =
        limits.costUsdPerDay === undefined ? undefined : toMicroUsd(limits.costUsdPerDay)
      const report: UsageReport = {
        tenant,
        day: today.day,
        resets_at: new Date(dayEndMs(now)).toISOString(),
        requests: {
          today: today.requests,
          per_minute: {
            limit: window?.limit ?? null,
            used: window ? window.limit - window.remaining : 0,
            remaining: window?.remaining ?? null,
            resets_at: new Date(
              window?.resetAtMs ?? (Math.floor(now / 60_000) + 1) * 60_000,
            ).toISOString(),
          },
        },
        concurrent_turns: remaining(limits.concurrentTurns, active),
        tokens: {
          ...remaining(limits.tokensPerDay, today.tokens + today.reservedTokens),
          used: today.tokens,
          reserved: today.reservedTokens,
        },
        cost_usd: {
          limit: limits.costUsdPerDay ?? null,
          used: costUsd,
          reserved: today.reservedCostMicroUsd / 1_000_000,
          remaining:
            costLimitMicro === undefined
              ? null
              : Math.max(0, costLimitMicro - today.costMicroUsd - today.reservedCostMicroUsd) /
                1_000_000,
        },
        output_bytes: remaining(limits.outputBytesPerDay, today.outputBytes),
      }
      return jsonResponse(JSON.stringify(report), 200, window ? windowHeaders(window, now) : {})
    },
  )
  return routes
}

function remaining(limit: number | undefined, used: number) {
  return {
    limit: limit ?? null,
    used,
    remaining: limit === undefined ? null : Math.max(0, limit - used),
  }
}

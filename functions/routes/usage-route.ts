import { Hono } from 'hono'
import type { UsageReport } from '../../src/contract/tenancy.ts'
import { dayEndMs, toMicroUsd } from '../../src/ports/tenant-limiter.ts'
import type { AppEnv } from '../http/app-context.ts'
import { JSON_TYPE } from '../http/event-framing.ts'
import { rejectQuery } from '../http/request-input.ts'
import { limitsOf, type Tenancy, windowHeaders } from '../tenancy/tenancy.ts'

/**
 * `GET /usage`: the calling tenant's usage today (UTC) against its limits: requests (today, and
 * in the current one-minute window), running turns, model tokens and estimated cost. A limit
 * that does not apply is `null` (and so is its `remaining`). The call itself is not counted
 * and never refused for the request limit.
 */
export function usageRoute(tenancy: Tenancy): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get('/usage', async (c) => {
    rejectQuery(c.req.url)
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
      tokens: remaining(limits.tokensPerDay, today.tokens),
      cost_usd: {
        limit: limits.costUsdPerDay ?? null,
        used: costUsd,
        remaining:
          costLimitMicro === undefined
            ? null
            : Math.max(0, costLimitMicro - today.costMicroUsd) / 1_000_000,
      },
    }
    return new Response(JSON.stringify(report), {
      headers: { 'content-type': JSON_TYPE, ...(window ? windowHeaders(window, now) : {}) },
    })
  })
  return routes
}

function remaining(limit: number | undefined, used: number) {
  return {
    limit: limit ?? null,
    used,
    remaining: limit === undefined ? null : Math.max(0, limit - used),
  }
}

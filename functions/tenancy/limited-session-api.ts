import type { SessionApi } from '../../src/core/session-api.ts'
import { bindAll } from '../http/turn-log.ts'
import { checkDailyQuota, limitsOf, type Tenancy, withTurnSlot } from './tenancy.ts'

/**
 * The SessionApi with per-tenant turn admission: every call that may start model work (a turn,
 * a permission or plan decision that continues one, a manual compaction, an exec run, an
 * automation run, a verification, a loop step) is refused with 429 `quota_exceeded` when
 * today's tokens or cost are used up, and runs in one of the tenant's turn slots
 * (`too_many_concurrent_turns` when all are taken). Ending or cancelling a session is never
 * refused; a turn resumed by the sandbox runner's callback continues one already admitted.
 * Usage is charged per model response by the service's meter, whoever started the turn.
 */
export function limitedSessionApi(api: SessionApi, tenancy: Tenancy): SessionApi {
  async function admitted<T>(tenant: string, run: () => Promise<T>): Promise<T> {
    const limits = limitsOf(tenancy, tenant)
    await checkDailyQuota(tenancy, tenant, limits)
    return withTurnSlot(tenancy, tenant, limits.concurrentTurns, run)
  }

  return {
    ...bindAll(api),
    stepTurn: (tenant, sessionId, request, options) =>
      admitted(tenant, () => api.stepTurn(tenant, sessionId, request, options)),
    resolvePermission: (tenant, sessionId, request, options) =>
      admitted(tenant, () => api.resolvePermission(tenant, sessionId, request, options)),
    approvePlan: (tenant, sessionId, request, options) =>
      admitted(tenant, () => api.approvePlan(tenant, sessionId, request, options)),
    compact: (tenant, sessionId, options) =>
      admitted(tenant, () => api.compact(tenant, sessionId, options)),
    exec: (tenant, body, options) => admitted(tenant, () => api.exec(tenant, body, options)),
    trigger: (tenant, request) => admitted(tenant, () => api.trigger(tenant, request)),
    verify: (tenant, sessionId, request) =>
      admitted(tenant, () => api.verify(tenant, sessionId, request)),
    stepLoop: (tenant, loopId, request) =>
      admitted(tenant, () => api.stepLoop(tenant, loopId, request)),
  }
}

import type * as z from 'zod'
import { envInteger as integer } from '../src/contract/env-values.ts'
import type { ServiceDefaults } from '../src/core/session-service.ts'

/**
 * The background work variables (docs/configuration.md#turn-engine), spread into the
 * environment schema of env-config.ts, and the engine's settings made of them.
 */
export const WorkEnvShape = {
  /** How often the background worker looks for work whose trigger was lost (functions/background/). */
  TURNLINE_WORK_SWEEP_MS: integer(100, 86_400_000).default(15_000),
  /** Background turns one process runs at once. */
  TURNLINE_WORK_CONCURRENCY: integer(1, 1024).default(16),
  /** Background work refused for the daily quota waits; the longest pause between tries. */
  TURNLINE_WORK_QUOTA_RETRY_MS: integer(100, 86_400_000).default(300_000),
  /** Background work still refused for the daily quota this long after its 202 fails. */
  TURNLINE_WORK_MAX_AGE_MS: integer(1000, 30 * 86_400_000).default(172_800_000),
  /** Background records one tenant may have pending; past them new work is 429. */
  TURNLINE_MAX_PENDING_WORK: integer(1, 1_000_000).default(1000),
  /** Loops with a schedule one tenant may have; past them a new one is 409. */
  TURNLINE_MAX_SCHEDULED_LOOPS: integer(1, 1_000_000).default(100),
}

type WorkEnv = z.output<z.ZodObject<typeof WorkEnvShape>>

/** What the engine takes of them: the quota wait and the tenant caps (service-deps.ts). */
export function workDefaults(env: WorkEnv): Pick<ServiceDefaults, 'quotaWait' | 'tenantCaps'> {
  return {
    quotaWait: {
      retryMaxMs: env.TURNLINE_WORK_QUOTA_RETRY_MS,
      maxAgeMs: env.TURNLINE_WORK_MAX_AGE_MS,
    },
    tenantCaps: {
      scheduledLoops: env.TURNLINE_MAX_SCHEDULED_LOOPS,
      pendingWork: env.TURNLINE_MAX_PENDING_WORK,
    },
  }
}

import { isTurnlineError } from '../../contract/errors.ts'
import type { WorkLocation } from '../../contract/work-record.ts'
import { latestCronSlot } from '../../shared/cron-expression.ts'
import { inTenantTurns } from '../../shared/tenant-lanes.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { firingCron } from '../loops/loop-entry-need.ts'
import { LoopStore } from '../loops/loop-store.ts'
import { dropEntryPastGrace } from './entry-grace.ts'
import { entriesForPass } from './pass-budget.ts'
import { startLoopRun } from './run-loop.ts'

/** What one pass over the schedules did. */
export interface ScheduleSweep {
  /** Runs started (their first step's record, to wake). */
  started: WorkLocation[]
  /** Slots that found their loop paused or a run still running: recorded, no run. */
  skipped: number
}

/** Tenants whose schedules one pass fires side by side. */
const SCHEDULE_LANES = 8

const entryTenant = (entry: { tenant: string }) => entry.tenant
const iso = (deps: ServiceDeps) => new Date(deps.clock.now()).toISOString()

/**
 * Fires the schedules that are due (any process, any time: Node's worker every sweep, a
 * Workers Cron Trigger, an EventBridge schedule on Lambda). A loop's due slot is the newest
 * minute of its cron after its `last_slot` (or its creation), at most a week back — minutes
 * missed while nothing swept collapse into one run. The run's id derives from the loop and the
 * slot, so two processes firing one slot start one run; a slot that finds a run running or the
 * loop paused is recorded as spent and starts nothing; a completed, failed or deleted loop
 * loses its schedule entry.
 *
 * The schedules are taken in turn by tenant (inTenantTurns): one loop of a tenant at a time, up
 * to SCHEDULE_LANES tenants side by side, each next loop the one of the tenant served least
 * recently: a tenant's first due loop waits for at most one loop of each other tenant, not for
 * all of another tenant's loops (each about two store reads), so a tenant with very many
 * schedules, or slow ones, makes its own firing late and no other's. And a pass checks at most
 * PASS_BUDGET_PER_TENANT schedules of one tenant (entriesForPass): the rest are the first the
 * next pass checks, so the pass is not as long as the busiest tenant's schedules, and no due
 * schedule is left behind.
 */
export async function fireDueSchedules(
  deps: ServiceDeps,
  queue: WorkQueue,
  log: (entry: Record<string, unknown>) => void,
): Promise<ScheduleSweep> {
  const store = new LoopStore(deps.sessions)
  const result: ScheduleSweep = { started: [], skipped: 0 }
  const entries = await entriesForPass(store, 'schedules', await store.scheduleEntries(), iso(deps))
  await inTenantTurns(entries, entryTenant, SCHEDULE_LANES, async (entry) => {
    const { tenant, loopId } = entry
    try {
      const fired = await fireOne(deps, queue, store, tenant, loopId)
      if (fired === 'skipped') result.skipped++
      else if (fired) result.started.push(fired)
    } catch (error) {
      log({
        level: 'warn',
        msg: 'loop schedule failed',
        tenant,
        loop: loopId,
        error: String(error),
      })
    }
  })
  return result
}

async function fireOne(
  deps: ServiceDeps,
  queue: WorkQueue,
  store: LoopStore,
  tenant: string,
  loopId: string,
): Promise<WorkLocation | 'skipped' | undefined> {
  let loop: Awaited<ReturnType<LoopStore['load']>>
  try {
    loop = await store.load(tenant, loopId)
  } catch (error) {
    if (!isTurnlineError(error, 'not_found')) throw error
    // A loop is created after its entry: one younger than ENTRY_GRACE_MS may be on its way.
    await dropEntryPastGrace(deps, store, 'schedules', tenant, loopId)
    return undefined
  }
  const { state } = loop
  const cron = firingCron(state)
  if (!state.schedule || !cron) {
    await store.removeEntryRechecked('schedules', tenant, loopId, iso(deps))
    return undefined
  }
  const after = Date.parse(state.schedule.last_slot ?? state.started_at)
  const slot = latestCronSlot(cron, after, deps.clock.now())
  if (slot === undefined) return undefined
  const last_slot = new Date(slot).toISOString()
  if (state.status === 'paused' || state.run?.state === 'running') {
    await store.save(loop, { ...state, schedule: { ...state.schedule, last_slot } })
    return 'skipped'
  }
  const started = await startLoopRun(deps, queue, tenant, loopId, {
    trigger: 'schedule',
    idempotencyKey: `schedule/${last_slot}`,
    slot: last_slot,
  })
  return { tenant, session_id: started.work.session_id, work_id: started.work.work_id }
}

import { isTurnlineError } from '../../contract/errors.ts'
import type { WorkLocation } from '../../contract/work-record.ts'
import { inTenantTurns } from '../../shared/tenant-lanes.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { LoopStore } from '../loops/loop-store.ts'
import { dropEntryPastGrace } from './entry-grace.ts'
import { entriesForPass } from './pass-budget.ts'
import { recordRunStep } from './run-loop.ts'

/** Tenants whose run entries one pass checks side by side. */
const REVIVAL_LANES = 8

const entryTenant = (entry: { tenant: string }) => entry.tenant

/**
 * Revives loop runs whose step record was lost (any process, every sweep): a run is saved in
 * the loop state and then its first step recorded, so an instance that died between the two
 * left a run `running` that no record moves — asking `POST …/run` again was the only way on.
 * Every run started leaves an entry under `.turnline/loop-runs/` before it is saved; the sweep
 * reads each such loop and, for a run still running whose loop has not moved for a lease,
 * records the step it is at (create-only: a record already there, the usual case, changes
 * nothing). An entry whose loop has no running run any more is dropped once it is older than
 * ENTRY_GRACE_MS (the run may be on its way: the entry is written first); one whose loop is gone
 * at once. Answers the records it wrote, for the sweep to wake.
 *
 * The entries are taken in turn by tenant, as the schedules are (inTenantTurns, up to
 * REVIVAL_LANES tenants side by side): a tenant with very many runs under way delays another
 * tenant's revival by at most one check of each tenant ahead of it. A pass checks at most
 * PASS_BUDGET_PER_TENANT runs of one tenant (entriesForPass); the next pass checks the rest first.
 */
export async function reviveLoopRuns(
  deps: ServiceDeps,
  queue: WorkQueue,
  log: (entry: Record<string, unknown>) => void,
): Promise<WorkLocation[]> {
  const store = new LoopStore(deps.sessions)
  const revived: WorkLocation[] = []
  const now = new Date(deps.clock.now()).toISOString()
  const entries = await entriesForPass(store, 'loop-runs', await store.runEntries(), now)
  await inTenantTurns(entries, entryTenant, REVIVAL_LANES, async (entry) => {
    const { tenant, loopId } = entry
    try {
      const at = await reviveOne(deps, queue, store, tenant, loopId)
      if (at) {
        log({
          level: 'warn',
          msg: 'loop run revived: its step had no record',
          tenant,
          loop: loopId,
        })
        revived.push(at)
      }
    } catch (error) {
      log({
        level: 'warn',
        msg: 'loop run check failed',
        tenant,
        loop: loopId,
        error: String(error),
      })
    }
  })
  return revived
}

async function reviveOne(
  deps: ServiceDeps,
  queue: WorkQueue,
  store: LoopStore,
  tenant: string,
  loopId: string,
): Promise<WorkLocation | undefined> {
  let state: Awaited<ReturnType<LoopStore['load']>>['state']
  try {
    state = (await store.load(tenant, loopId)).state
  } catch (error) {
    if (!isTurnlineError(error, 'not_found')) throw error
    const now = new Date(deps.clock.now()).toISOString()
    await store.removeEntryRechecked('loop-runs', tenant, loopId, now)
    return undefined
  }
  if (state.run?.state !== 'running') {
    // The entry is written before the run is saved: one younger than ENTRY_GRACE_MS may be its.
    await dropEntryPastGrace(deps, store, 'loop-runs', tenant, loopId)
    return undefined
  }
  // A run that moved within a lease is between a step and the next one's record, or starting.
  if (deps.clock.now() - Date.parse(state.updated_at) < deps.defaults.leaseMs) return undefined
  const work = await recordRunStep(deps, queue, tenant, state)
  return work.duplicate ? undefined : { tenant, session_id: work.session_id, work_id: work.work_id }
}

import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { SessionApi } from '../../src/core/session-api.ts'

/**
 * One sweep of the deployment's background work, the same wherever it runs (Node's worker every
 * TURNLINE_WORK_SWEEP_MS, Lambda's scheduled `index.sweep`): fires the loop schedules that are
 * due, then lists the whole queue page by page and wakes every record — work whose bell was lost,
 * whose instance died, or whose session was busy. Resolves with how many records it found; a
 * fault is logged (the next sweep tries again).
 */
export async function sweepWork(
  api: Pick<SessionApi, 'listWork' | 'fireSchedules'>,
  wake: (at: WorkLocation) => void,
  log: (entry: Record<string, unknown>) => void,
  stopped: () => boolean = () => false,
): Promise<number> {
  let found = 0
  let after: string | undefined
  try {
    await api.fireSchedules()
  } catch (error) {
    log({ level: 'warn', msg: 'loop schedules failed', error: String(error) })
  }
  try {
    do {
      const page = await api.listWork(after)
      for (const at of page.items) wake(at)
      found += page.items.length
      after = page.next
    } while (after !== undefined && !stopped())
  } catch (error) {
    log({ level: 'warn', msg: 'background sweep failed', error: String(error) })
  }
  return found
}

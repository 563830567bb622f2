import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { SessionApi } from '../../src/core/session-api.ts'

export interface WorkSweepOptions {
  /** Rings the bell for one page of records (the worker's wake, a queue's batch send). */
  wake: (page: WorkLocation[]) => void | Promise<void>
  /** One structured line per fault; the sweep goes on where it can. */
  log: (entry: Record<string, unknown>) => void
  /** Asked between pages: a stopped worker lists no further. */
  stopped?: () => boolean
}

/**
 * One sweep of the deployment's background work, the same on every runtime (the Node worker's
 * timer, the Worker's cron trigger, Lambda's schedule): starts the runs of the loop schedules
 * that are due, then lists the whole queue and wakes every record — work whose trigger was lost,
 * or whose instance died mid-run (run again, it is taken over once that instance's lease
 * lapsed). A record woken twice runs once (run-work.ts). Resolves with how many it found.
 */
export async function sweepWork(
  api: Pick<SessionApi, 'listWork' | 'fireSchedules'>,
  options: WorkSweepOptions,
): Promise<number> {
  let found = 0
  let after: string | undefined
  try {
    await api.fireSchedules()
  } catch (error) {
    options.log({ level: 'warn', msg: 'loop schedules failed', error: String(error) })
  }
  try {
    do {
      const page = await api.listWork(after)
      if (page.items.length > 0) await options.wake(page.items)
      found += page.items.length
      after = page.next
    } while (after !== undefined && !options.stopped?.())
  } catch (error) {
    options.log({ level: 'warn', msg: 'background sweep failed', error: String(error) })
  }
  return found
}

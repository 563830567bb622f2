import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { SessionApi } from '../../src/core/session-api.ts'
import { workKeyOf } from '../../src/store/work-queue.ts'

export interface WorkSweepOptions {
  /** Rings the bell for one page of records (the worker's wake, a queue's batch send). */
  wake: (page: WorkLocation[]) => void | Promise<void>
  /** One structured line per fault; the sweep goes on where it can. */
  log: (entry: Record<string, unknown>) => void
  /** Asked between pages: a stopped worker lists no further. */
  stopped?: () => boolean
}

/**
 * Records already rung for in one sweep (queue-relative keys): the schedule pass and the
 * listing run side by side and may meet the same record, which then gets one wake, not two.
 */
type Woken = Set<string>

/** Wakes the records of `page` not woken yet in this sweep; answers how many it woke. */
async function wakeNew(page: WorkLocation[], woken: Woken, options: WorkSweepOptions) {
  const fresh = page.filter((at) => {
    const key = workKeyOf(at)
    if (woken.has(key)) return false
    woken.add(key)
    return true
  })
  if (fresh.length > 0) await options.wake(fresh)
  return fresh.length
}

/**
 * The schedule half of a sweep: starts the runs of the loop schedules that are due and revives
 * runs whose step record was lost (fireSchedules), then wakes the records they wrote. A fault is
 * logged, never thrown.
 */
export async function fireAndWake(
  api: Pick<SessionApi, 'fireSchedules'>,
  options: WorkSweepOptions,
  woken: Woken = new Set(),
): Promise<void> {
  try {
    const fired = await api.fireSchedules()
    await wakeNew(fired.started, woken, options)
  } catch (error) {
    options.log({ level: 'warn', msg: 'loop schedules failed', error: String(error) })
  }
}

/**
 * The listing half of a sweep: lists the whole queue page by page and wakes every record —
 * work whose trigger was lost, or whose instance died mid-run (run again, it is taken over once
 * that instance's lease lapsed). A fault is logged, never thrown. Answers how many it woke.
 */
export async function wakeListed(
  api: Pick<SessionApi, 'listWork'>,
  options: WorkSweepOptions,
  woken: Woken = new Set(),
): Promise<number> {
  let found = 0
  let after: string | undefined
  try {
    do {
      const page = await api.listWork(after)
      found += await wakeNew(page.items, woken, options)
      after = page.next
    } while (after !== undefined && !options.stopped?.())
  } catch (error) {
    options.log({ level: 'warn', msg: 'background sweep failed', error: String(error) })
  }
  return found
}

/**
 * One sweep of the deployment's background work, the same on every runtime (the Worker's cron
 * trigger, Lambda's schedule; the Node worker runs the two halves on its own timer): the loop
 * schedules' pass and the listing of the whole queue run side by side, so a long schedule pass
 * (a tenant with many due loops, or slow reads) does not hold back the recovery of any tenant's
 * lost work. A record woken twice runs once (run-work.ts), and one sweep wakes each record once.
 * Resolves with how many records it woke: those listed and the runs the pass started.
 */
export async function sweepWork(
  api: Pick<SessionApi, 'listWork' | 'fireSchedules'>,
  options: WorkSweepOptions,
): Promise<number> {
  const woken: Woken = new Set()
  await Promise.all([fireAndWake(api, options, woken), wakeListed(api, options, woken)])
  return woken.size
}

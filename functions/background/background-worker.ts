import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { SessionApi } from '../../src/core/session-api.ts'
import { TenantFairQueue } from '../../src/shared/tenant-fair-queue.ts'
import { workKeyOf } from '../../src/store/work-queue.ts'
import { fireAndWake, type WorkSweepOptions, wakeListed } from './work-sweep.ts'
import type { WorkTrigger } from './work-trigger.ts'

export interface BackgroundWorkerOptions {
  /**
   * Runs at once in this process (one more while one tenant's fill them all and another
   * tenant's work arrives); more wait in memory (or, beyond MAX_WAITING, for the sweep).
   */
  concurrency: number
  /** How often the whole queue is listed for work whose trigger was lost (TURNLINE_WORK_SWEEP_MS). */
  sweepMs: number
  /** One structured line per sweep fault or run fault. */
  log: (entry: Record<string, unknown>) => void
}

/** Wakes kept in memory at most; beyond them a wake is dropped and the next sweep finds it. */
const MAX_WAITING = 10_000
/** Wakes of one tenant kept in memory at most (the same: the sweep finds the rest). */
const MAX_WAITING_PER_TENANT = 1_000

/**
 * The background worker of a long-running server (`npm start`, Docker): runs recorded
 * background turns (contract/work-record.ts) through the turn engine in this process, at most
 * `concurrency` at once. Routes wake it right after they record a turn (`wake`); a sweep every
 * `sweepMs` lists the deployment's whole queue and wakes whatever is not running here — work
 * whose wake was lost (this process restarted, the in-memory queue was full) or whose instance
 * died mid-run (its turn is taken over once the dead instance's lease lapsed: `runWork`). A
 * record is never claimed: two workers running the same one meet at the session's lease (one
 * gets `session_busy`) and at its idempotency key (a second run replays the first outcome).
 *
 * The places are shared fairly between tenants (TenantFairQueue): a free place goes to the
 * waiting work of the tenant with the fewest running; a tenant takes the last place (with more
 * than one) only while no other tenant's work waits, and while it holds every place another
 * tenant's work that arrives starts at once in one place more. So a lone tenant uses every
 * place, and a tenant that queues a great deal of long work delays its own, not every other
 * tenant's behind it.
 */
export class BackgroundWorker implements WorkTrigger {
  private readonly running = new Set<string>()
  private readonly waiting: TenantFairQueue<WorkLocation>
  private readonly retries = new Map<string, ReturnType<typeof setTimeout>>()
  private sweepTimer: ReturnType<typeof setInterval> | undefined
  private listing: Promise<number> | undefined
  private firing: Promise<void> | undefined
  private stopped = false

  constructor(
    private readonly api: Pick<SessionApi, 'runWork' | 'listWork' | 'fireSchedules'>,
    private readonly options: BackgroundWorkerOptions,
  ) {
    this.waiting = new TenantFairQueue({
      maxWaiting: MAX_WAITING,
      maxWaitingPerTenant: MAX_WAITING_PER_TENANT,
      maxRunningPerTenant: options.concurrency,
      places: options.concurrency,
    })
  }

  /** Sweeps now (work left by an earlier process), then every `sweepMs`. */
  start(): void {
    void this.sweep()
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepMs)
    this.sweepTimer.unref?.()
  }

  /** Takes no new work; turns running now go on until the process ends. */
  stop(): void {
    this.stopped = true
    if (this.sweepTimer) clearInterval(this.sweepTimer)
    for (const timer of this.retries.values()) clearTimeout(timer)
    this.retries.clear()
    this.waiting.clear()
  }

  /** Runs running in this process now. */
  get active(): number {
    return this.running.size
  }

  wake(at: WorkLocation): void {
    const key = workKeyOf(at)
    if (this.stopped || this.running.has(key) || this.waiting.has(at.tenant, key)) return
    if (this.waiting.add(at.tenant, key, at)) this.pump()
  }

  /**
   * Fires the loop schedules that are due and lists the whole queue once, waking every record,
   * each half on its own: a schedule pass still under way (a tenant with many due loops, slow
   * reads) holds back neither this listing nor the next sweep's, so lost work of every tenant is
   * found at each sweep whatever the pass costs; a second pass starts only once the first ended.
   * Resolves with how many records the listing found.
   */
  sweep(): Promise<number> {
    this.firing ??= fireAndWake(this.api, this.sweepOptions()).finally(() => {
      this.firing = undefined
    })
    this.listing ??= wakeListed(this.api, this.sweepOptions()).finally(() => {
      this.listing = undefined
    })
    return this.listing
  }

  private sweepOptions(): WorkSweepOptions {
    return {
      wake: (page) => {
        for (const at of page) this.wake(at)
      },
      log: this.options.log,
      stopped: () => this.stopped,
    }
  }

  private pump(): void {
    // The queue holds the places: `concurrency`, and one more while one tenant holds them all.
    for (let next = this.waiting.take(); next; next = this.waiting.take()) {
      const { tenant, key, item } = next
      this.running.add(key)
      void this.run(item).finally(() => {
        this.running.delete(key)
        this.waiting.done(tenant)
        this.pump()
      })
    }
  }

  private async run(at: WorkLocation): Promise<void> {
    try {
      const result = await this.api.runWork(at)
      // Another turn holds the session: try again when its lease says, well before a sweep.
      if (result.outcome === 'busy') this.retryAfter(at, result.retryAfterMs)
      // A loop run's next step, recorded by this one: at once, not at the next sweep.
      if (result.outcome === 'done' && result.next) this.wake(result.next)
    } catch (error) {
      // The record could not be read or updated (the store is down): the sweep tries again.
      this.options.log({
        level: 'warn',
        msg: 'background run failed',
        work: at.work_id,
        session: at.session_id,
        error: String(error),
      })
    }
  }

  private retryAfter(at: WorkLocation, ms: number): void {
    const key = workKeyOf(at)
    if (this.stopped || this.retries.has(key)) return
    const timer = setTimeout(
      () => {
        this.retries.delete(key)
        this.wake(at)
      },
      Math.min(ms, this.options.sweepMs),
    )
    timer.unref?.()
    this.retries.set(key, timer)
  }
}

import { TenantFairQueue } from '../../src/shared/tenant-fair-queue.ts'

/**
 * Runs `work` calls one after another, each once the previous one settled (whatever it gave):
 * what one of them holds at once (a git reading: up to its bound on bytes) is never held twice.
 * The runner serves every tenant, so the next call is not the oldest of all but the oldest of
 * the tenant whose last call started least recently (TenantFairQueue): a tenant that asks for
 * many makes its own wait, and another tenant's call waits for at most one call of each tenant
 * ahead of it.
 */
export class OneAtATime {
  readonly #waiting = new TenantFairQueue<() => void>({
    maxWaiting: Number.POSITIVE_INFINITY,
    maxWaitingPerTenant: Number.POSITIVE_INFINITY,
    maxRunningPerTenant: 1,
  })
  #calls = 0
  #busy = false

  run<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        Promise.resolve()
          .then(work)
          .then(resolve, reject)
          .finally(() => {
            this.#busy = false
            this.#waiting.done(tenant)
            this.#next()
          })
      }
      this.#waiting.add(tenant, String(this.#calls++), start)
      this.#next()
    })
  }

  #next(): void {
    if (this.#busy) return
    const next = this.#waiting.take()
    if (!next) return
    this.#busy = true
    next.item()
  }
}

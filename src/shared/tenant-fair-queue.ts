export interface TenantFairLimits {
  /** Items waiting in all. */
  maxWaiting: number
  /** Items one tenant may have waiting. */
  maxWaitingPerTenant: number
  /** Items of one tenant running at once. */
  maxRunningPerTenant: number
  /**
   * Places shared by every tenant (none: the caller bounds what runs). With two or more, a
   * tenant takes the last free place only while no other tenant's work waits, so a lone tenant
   * fills them all; and while one tenant holds them all, another tenant's work that arrives
   * starts at once in one place more (`take`), so it never waits behind all of one tenant's.
   */
  places?: number | undefined
}

/**
 * Work waiting to run, shared fairly between tenants: the next item is the oldest of the tenant
 * with the fewest running, among those the one started least recently; a tenant may have only so
 * many waiting and running. So a tenant that queues a great deal of work makes its own wait,
 * and another tenant's work runs at the next free place, not behind all of it.
 */
export class TenantFairQueue<T> {
  readonly #limits: TenantFairLimits
  readonly #waiting = new Map<string, Map<string, T>>()
  readonly #running = new Map<string, number>()
  /** When each tenant last had an item started (a counter, not a time). */
  readonly #started = new Map<string, number>()
  #starts = 0
  #size = 0
  /** Items running, every tenant's. */
  #total = 0

  constructor(limits: TenantFairLimits) {
    this.#limits = limits
  }

  has(tenant: string, key: string): boolean {
    return this.#waiting.get(tenant)?.has(key) ?? false
  }

  /** Queues an item; false (and nothing queued) when the queue or the tenant's part is full. */
  add(tenant: string, key: string, item: T): boolean {
    const mine = this.#waiting.get(tenant)
    if (this.#size >= this.#limits.maxWaiting) return false
    if ((mine?.size ?? 0) >= this.#limits.maxWaitingPerTenant) return false
    if (mine) mine.set(key, item)
    else this.#waiting.set(tenant, new Map([[key, item]]))
    this.#size += 1
    return true
  }

  /** The next item to start, counted as running until `done`; undefined when none may start. */
  take(): { tenant: string; key: string; item: T } | undefined {
    let chosen: string | undefined
    let best: [number, number] | undefined
    for (const tenant of this.#waiting.keys()) {
      const running = this.#running.get(tenant) ?? 0
      if (running >= this.#limits.maxRunningPerTenant || !this.#placeFor(tenant, running)) continue
      const rank: [number, number] = [running, this.#started.get(tenant) ?? -1]
      if (!best || rank[0] < best[0] || (rank[0] === best[0] && rank[1] < best[1])) {
        best = rank
        chosen = tenant
      }
    }
    if (chosen === undefined) return undefined
    const mine = this.#waiting.get(chosen) as Map<string, T>
    const [key, item] = mine.entries().next().value as [string, T]
    mine.delete(key)
    if (mine.size === 0) this.#waiting.delete(chosen)
    this.#size -= 1
    this.#running.set(chosen, (this.#running.get(chosen) ?? 0) + 1)
    this.#total += 1
    this.#started.set(chosen, this.#starts++)
    return { tenant: chosen, key, item }
  }

  /**
   * Whether `tenant`, running `running`, may start one more under `places`: any free place but
   * the last; the last to a tenant that does not hold all the others, or to one whose work alone
   * waits; and, every place held by one other tenant, one place more (the last place, lent to a
   * lone tenant, given back at once). With one place, that place only.
   */
  #placeFor(tenant: string, running: number): boolean {
    const places = this.#limits.places
    if (places === undefined) return true
    if (this.#total < places - 1) return true
    if (this.#total === places - 1)
      return places < 2 || running < places - 1 || this.#waiting.size === 1
    if (places < 2 || this.#total > places || running > 0) return false
    for (const [other, count] of this.#running)
      if (other !== tenant && count === places) return true
    return false
  }

  /** An item `take` gave ended. */
  done(tenant: string): void {
    if (this.#running.has(tenant)) this.#total -= 1
    const running = (this.#running.get(tenant) ?? 1) - 1
    if (running > 0) this.#running.set(tenant, running)
    else {
      this.#running.delete(tenant)
      if (!this.#waiting.has(tenant)) this.#started.delete(tenant)
    }
  }

  /** Drops every waiting item (running ones still end with `done`). */
  clear(): void {
    this.#waiting.clear()
    this.#size = 0
  }
}

import { TenantFairQueue } from './tenant-fair-queue.ts'

/**
 * Work of many tenants split into one lane per tenant: a lane runs its tenant's items one after
 * another, up to `lanesAtOnce` lanes run side by side, and the lanes start in the order their
 * tenants first appear. So one tenant's slow items hold back only that tenant's.
 */
export async function inTenantLanes<T>(
  items: readonly T[],
  tenantOf: (item: T) => string,
  lanesAtOnce: number,
  run: (lane: readonly T[]) => Promise<void>,
): Promise<void> {
  const lanes = new Map<string, T[]>()
  for (const item of items) {
    const tenant = tenantOf(item)
    const lane = lanes.get(tenant)
    if (lane) lane.push(item)
    else lanes.set(tenant, [item])
  }
  const queue = [...lanes.values()]
  const next = async (): Promise<void> => {
    for (let lane = queue.shift(); lane; lane = queue.shift()) await run(lane)
  }
  await Promise.all(Array.from({ length: Math.min(lanesAtOnce, queue.length) }, next))
}

/**
 * Work of many tenants taken in turn by tenant (TenantFairQueue): one item of a tenant at a
 * time, in the order given, up to `lanesAtOnce` tenants side by side, the next item always the
 * one of the tenant started least recently. Every item runs in this one pass, and a tenant's
 * k-th item starts after at most k items of each other tenant, however many that tenant has.
 * `run` answers its own failures; one that throws ends the pass.
 */
export async function inTenantTurns<T>(
  items: readonly T[],
  tenantOf: (item: T) => string,
  lanesAtOnce: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  const queue = new TenantFairQueue<T>({
    maxWaiting: items.length,
    maxWaitingPerTenant: items.length,
    maxRunningPerTenant: 1,
  })
  for (const [index, item] of items.entries()) queue.add(tenantOf(item), String(index), item)
  const tenants = new Set(items.map(tenantOf)).size
  // A lane that finds every waiting tenant running ends: each of those lanes takes its next.
  const next = async (): Promise<void> => {
    for (let taken = queue.take(); taken; taken = queue.take()) {
      try {
        await run(taken.item)
      } finally {
        queue.done(taken.tenant)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(lanesAtOnce, tenants) }, next))
}

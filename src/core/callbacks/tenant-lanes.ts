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

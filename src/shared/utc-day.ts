const DAY_MS = 86_400_000

/** The UTC day of an instant, `YYYY-MM-DD` (the day a tenant's daily counters belong to). */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10)
}

/** When the UTC day of `nowMs` ends (epoch ms). */
export function dayEndMs(nowMs: number): number {
  return (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS
}

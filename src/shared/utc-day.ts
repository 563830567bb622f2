const DAY_MS = 86_400_000

/** The last day asked for and where it starts and ends: a turn asks for the same day many times. */
let last = { start: 0, end: 0, day: '' }

/** The UTC day of an instant, `YYYY-MM-DD` (the day a tenant's daily counters belong to). */
export function utcDay(nowMs: number): string {
  if (nowMs >= last.start && nowMs < last.end) return last.day
  const day = new Date(nowMs).toISOString().slice(0, 10)
  const start = Math.floor(nowMs / DAY_MS) * DAY_MS
  last = { start, end: start + DAY_MS, day }
  return day
}

/** When the UTC day of `nowMs` ends (epoch ms). */
export function dayEndMs(nowMs: number): number {
  return (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS
}

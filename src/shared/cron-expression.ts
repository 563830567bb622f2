/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week), evaluated in UTC —
 * what Cloudflare Cron Triggers, EventBridge's `cron(...)` (minus its year field) and crontab
 * share. Each field: `*`, a number, a range `a-b`, a step `*\/n` or `a-b/n`, or a comma list of
 * these; day-of-week 0–7 (0 and 7 are Sunday). As in crontab, when both day fields are
 * restricted a day matching either one matches.
 */
export interface CronExpression {
  source: string
  minutes: ReadonlySet<number>
  hours: ReadonlySet<number>
  days: ReadonlySet<number>
  months: ReadonlySet<number>
  weekdays: ReadonlySet<number>
  anyDay: boolean
  anyWeekday: boolean
}

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const

const MINUTE_MS = 60_000

/** Parses an expression; the error says which field is wrong and why. */
export function parseCron(source: string): CronExpression | { error: string } {
  const parts = source.trim().split(/\s+/)
  if (parts.length !== 5) {
    return {
      error: `a cron expression has 5 fields (minute hour day month weekday), not ${parts.length}`,
    }
  }
  const sets: Set<number>[] = []
  for (const [i, field] of FIELDS.entries()) {
    const set = parseField(parts[i] ?? '', field.min, field.max)
    if (typeof set === 'string')
      return { error: `${field.name} field ${JSON.stringify(parts[i])}: ${set}` }
    sets.push(set)
  }
  const [minutes, hours, days, months, weekdays] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ]
  if (weekdays.delete(7)) weekdays.add(0)
  return {
    source,
    minutes,
    hours,
    days,
    months,
    weekdays,
    anyDay: parts[2] === '*',
    anyWeekday: parts[4] === '*',
  }
}

function parseField(text: string, min: number, max: number): Set<number> | string {
  const out = new Set<number>()
  for (const item of text.split(',')) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item)
    if (!match) return 'use *, n, a-b, */n, a-b/n or a list of these'
    const from = match[1] === '*' ? min : Number(match[2])
    const to = match[1] === '*' ? max : match[3] !== undefined ? Number(match[3]) : from
    const step = match[4] !== undefined ? Number(match[4]) : 1
    if (from < min || to > max || from > to) return `values must be within ${min}-${max}`
    if (step < 1) return 'a step must be at least 1'
    const end = match[4] !== undefined && match[3] === undefined && match[1] !== '*' ? max : to
    for (let v = from; v <= end; v += step) out.add(v)
  }
  return out
}

/** Whether the minute starting at `at` (epoch ms, UTC) is one of the expression's. */
export function cronMatches(cron: CronExpression, at: number): boolean {
  const d = new Date(at)
  if (!cron.minutes.has(d.getUTCMinutes()) || !cron.hours.has(d.getUTCHours())) return false
  if (!cron.months.has(d.getUTCMonth() + 1)) return false
  const day = cron.days.has(d.getUTCDate())
  const weekday = cron.weekdays.has(d.getUTCDay())
  if (cron.anyDay || cron.anyWeekday) return day && weekday
  return day || weekday
}

/**
 * The newest minute of the expression at or before `now` and after `after` (epoch ms), looking
 * back at most `lookbackMs` (a week by default): the slot a schedule owes a run for, if any.
 */
export function latestCronSlot(
  cron: CronExpression,
  after: number,
  now: number,
  lookbackMs = 7 * 24 * 60 * MINUTE_MS,
): number | undefined {
  const floor = Math.max(after, now - lookbackMs)
  for (let at = Math.floor(now / MINUTE_MS) * MINUTE_MS; at > floor; at -= MINUTE_MS) {
    if (cronMatches(cron, at)) return at
  }
  return undefined
}

import type { LoopEntryKind, LoopStore } from '../loops/loop-store.ts'

/**
 * Entries of one tenant (its scheduled loops, its runs under way) one sweep pass checks at most:
 * each check is about two store reads, so a pass lasts at most about this many checks of the
 * busiest tenant (its lane runs its checks one at a time), however many entries it has.
 */
export const PASS_BUDGET_PER_TENANT = 100

type Entry = { tenant: string; loopId: string }

/**
 * The entries one pass checks: every entry of a tenant that has at most `budget`; of a tenant
 * with more, `budget` of them, in loop-id order from just after where its previous pass stopped
 * (its cursor, `.turnline/pass-cursors/<kind>/<tenant>.json`), round past the end — so what one
 * pass leaves is what the next takes first, and each entry is checked at least once in every
 * ceil(entries / budget) passes: none is left behind for good. A schedule checked a pass or more
 * late fires its newest due minute then, as for minutes missed while nothing swept; none is
 * dropped. The cursor is moved before any entry is checked, so a pass that dies midway (a
 * timeout) does not make the next take the same entries again. Instances passing together read
 * the same cursor and take the same entries: a firing's run id derives from its minute, so each
 * still starts one run.
 */
export async function entriesForPass(
  store: LoopStore,
  kind: LoopEntryKind,
  entries: readonly Entry[],
  now: string,
  budget = PASS_BUDGET_PER_TENANT,
): Promise<Entry[]> {
  const byTenant = new Map<string, Entry[]>()
  for (const entry of entries) {
    const own = byTenant.get(entry.tenant)
    if (own) own.push(entry)
    else byTenant.set(entry.tenant, [entry])
  }
  const taken = await Promise.all(
    [...byTenant.entries()].map(async ([tenant, own]) => {
      if (own.length <= budget) return own
      const sorted = [...own].sort((a, b) => (a.loopId < b.loopId ? -1 : 1))
      const after = await store.passCursor(kind, tenant)
      const next = after === undefined ? -1 : sorted.findIndex((entry) => entry.loopId > after)
      const start = next === -1 ? 0 : next
      const turn = Array.from({ length: budget }, (_, n) => sorted[(start + n) % sorted.length])
      const chosen = turn.filter((entry): entry is Entry => entry !== undefined)
      const last = chosen.at(-1)
      if (last) await store.savePassCursor(kind, tenant, last.loopId, now)
      return chosen
    }),
  )
  return taken.flat()
}

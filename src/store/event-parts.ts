import { isTurnlineError } from '../contract/errors.ts'
import { MAX_EVENT_PARTS } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { fromBytes, toBytes } from './json-bytes.ts'
import { putOnce } from './put-once.ts'
import type { SessionKeys } from './session-ref.ts'

/**
 * The rolled events on a store that cannot append (S3): instead of one `events.jsonl` rewritten
 * whole at every rollup, create-only parts `events/<first>-<end>.jsonl`, each the canonical lines
 * of seqs [first, end), listed in the manifest (`event_parts`, format 2). A part's bytes follow
 * from its name and the log alone, so two writers that create the same part write the same bytes
 * and create-only makes the second a no-op. A rollup writes one part with the lines since the
 * last one (joined with the last part when that one is much smaller); VT Code's cap cuts the
 * head as before (whole parts before it are deleted once a manifest without them is in force;
 * the first part is read from the head on); beyond MAX_EVENT_PARTS the two smallest neighbours
 * are merged into one new part.
 */

/** [first seq, end seq) of a part. */
export type EventPart = readonly [first: number, end: number]

/**
 * The lines of seqs [from, end of `parts`), at most `limit`, read from the parts that hold them;
 * undefined when one is missing or does not hold the lines its name says (then the caller reads
 * the batches).
 */
export async function readPartLines(
  store: ObjectStore,
  keys: SessionKeys,
  parts: readonly EventPart[],
  from: number,
  limit = Number.POSITIVE_INFINITY,
): Promise<string[] | undefined> {
  const needed: EventPart[] = []
  let counted = 0
  for (const part of parts) {
    if (part[1] <= from) continue
    if (counted >= limit) break
    needed.push(part)
    counted += part[1] - Math.max(part[0], from)
  }
  // The parts are fetched side by side: their line counts tell which ones the page needs.
  const held = await Promise.all(
    needed.map(async ([first, end]) => {
      const stored = await store.get(keys.eventPart(first, end))
      return stored ? partLines(stored.body, end - first) : undefined
    }),
  )
  const lines: string[] = []
  for (const [i, part] of needed.entries()) {
    const got = held[i]
    if (!got) return undefined
    for (let at = Math.max(0, from - part[0]); at < got.length; at++) {
      if (lines.length >= limit) return lines
      lines.push(got[at] as string)
    }
  }
  return lines
}

function partLines(body: Uint8Array, count: number): string[] | undefined {
  let text: string
  try {
    text = fromBytes(body, 'events part')
  } catch (error) {
    if (isTurnlineError(error, 'corrupt_data')) return undefined
    throw error
  }
  if (!text.endsWith('\n')) return undefined
  const lines = text.slice(0, -1).split('\n')
  return lines.length === count ? lines : undefined
}

/** The parts after a rollup and the ones among them to create. */
export interface PartsPlan {
  parts: EventPart[]
  created: EventPart[]
}

/**
 * The parts that hold [head, end) once `added` (a new part starting at or after the head, or
 * none) follows `parts`: parts that end at or before the head are left out, a last part of less
 * than a quarter of the new one's lines is joined with it, and beyond `max` parts the two
 * neighbours with the fewest lines between them are merged into a new part (lines before the
 * head are not kept in it).
 */
export function planParts(
  parts: readonly EventPart[],
  added: EventPart | undefined,
  head: number,
  max = MAX_EVENT_PARTS,
): PartsPlan {
  const kept = parts.filter(([, end]) => end > head)
  const created = new Set<EventPart>()
  if (added) {
    // A last part of less than a quarter of the new one's lines is written again with them (at
    // most 1.25 times the new lines): small rollups (a history reset right after a checkpoint)
    // make no parts of their own, and the list stays short without rewriting much.
    const last = kept[kept.length - 1]
    const joined =
      last && last[1] === added[0] && 4 * (last[1] - Math.max(last[0], head)) < added[1] - added[0]
    const part: EventPart = joined ? [Math.max(last[0], head), added[1]] : added
    if (joined) kept.pop()
    kept.push(part)
    created.add(part)
  }
  while (kept.length > max) {
    let best = 0
    for (let i = 1; i + 1 < kept.length; i++) {
      if (span(kept, i, head) < span(kept, best, head)) best = i
    }
    const a = kept[best] as EventPart
    const b = kept[best + 1] as EventPart
    const merged: EventPart = [Math.max(a[0], head), b[1]]
    created.delete(a)
    created.delete(b)
    created.add(merged)
    kept.splice(best, 2, merged)
  }
  return { parts: kept, created: [...created] }
}

function span(parts: readonly EventPart[], i: number, head: number): number {
  const a = parts[i] as EventPart
  const b = parts[i + 1] as EventPart
  return b[1] - Math.max(a[0], head)
}

/**
 * Creates `part` from `lines` (the lines of seqs from `head` on). A part already there holds the
 * same bytes (another writer's rollup, or this one's before a crash): that is success.
 */
export async function createPart(
  store: ObjectStore,
  keys: SessionKeys,
  part: EventPart,
  lines: readonly string[],
  head: number,
): Promise<void> {
  const [first, end] = part
  const text = `${lines.slice(first - head, end - head).join('\n')}\n`
  await putOnce(store, keys.eventPart(first, end), toBytes(text), 'application/x-ndjson')
}

/** Keys of the parts in `before` that `after` no longer lists. */
export function droppedParts(
  keys: SessionKeys,
  before: readonly EventPart[],
  after: readonly EventPart[],
): string[] {
  const still = new Set(after.map(([first, end]) => keys.eventPart(first, end)))
  return before.map(([first, end]) => keys.eventPart(first, end)).filter((key) => !still.has(key))
}

/**
 * List paging and put-option checks shared by the ObjectStore adapters (list paging by those
 * that list keys themselves: memory, fs), in key order (src/shared/compare-keys.ts). A page holds objects
 * and folded prefixes together, in key order, at most `limit` entries; the cursor names the last
 * entry returned, so the next page resumes strictly after it (after the whole folded "folder"
 * when that entry was a prefix).
 */
import { TurnlineError } from '../../src/contract/errors.ts'
import type {
  AppendOptions,
  ListedObject,
  ListOptions,
  ListPage,
  PutOptions,
} from '../../src/ports/object-store.ts'
import { compareKeys } from '../../src/shared/compare-keys.ts'

export const MAX_LIST_LIMIT = 1000

export interface ListingPlan {
  prefix: string
  limit: number
  delimiter: '/' | undefined
  /** Skip keys at or before this one. */
  after: string | undefined
  /** Skip every key under this folded prefix (resuming after a prefix entry). */
  skipUnder: string | undefined
}

function decodeCursor(cursor: string): { after: string; folded: boolean } {
  const tag = cursor.slice(0, 2)
  if (tag === 'o:') return { after: cursor.slice(2), folded: false }
  if (tag === 'p:') return { after: cursor.slice(2), folded: true }
  throw new TurnlineError('invalid_input', 'Malformed list cursor', { logDetails: { cursor } })
}

function laterBound(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  return compareKeys(a, b) >= 0 ? a : b
}

export function planListing(prefix: string, options: ListOptions = {}): ListingPlan {
  const limit = options.limit ?? MAX_LIST_LIMIT
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TurnlineError('invalid_input', 'List limit must be a positive integer', {
      details: { limit },
    })
  }
  const cursor = options.cursor === undefined ? undefined : decodeCursor(options.cursor)
  return {
    prefix,
    limit: Math.min(limit, MAX_LIST_LIMIT),
    delimiter: options.delimiter,
    after: laterBound(options.startAfter, cursor?.after),
    skipUnder: cursor?.folded ? cursor.after : undefined,
  }
}

/** True when the plan excludes `key` because it lies at or before the resume point. */
export function isBeforeStart(plan: ListingPlan, key: string): boolean {
  if (plan.after !== undefined && compareKeys(key, plan.after) <= 0) return true
  return plan.skipUnder !== undefined && key.startsWith(plan.skipUnder)
}

/** True when no key starting with `keyPrefix` can appear in the page (whole subtree skippable). */
export function canSkipSubtree(plan: ListingPlan, keyPrefix: string): boolean {
  if (!keyPrefix.startsWith(plan.prefix) && !plan.prefix.startsWith(keyPrefix)) return true
  if (plan.skipUnder !== undefined && keyPrefix.startsWith(plan.skipUnder)) return true
  const after = plan.after
  return after !== undefined && !after.startsWith(keyPrefix) && compareKeys(keyPrefix, after) < 0
}

/** The folded prefix `key` belongs to under the plan's delimiter, if any. */
export function foldedPrefix(plan: ListingPlan, key: string): string | undefined {
  if (plan.delimiter === undefined) return undefined
  const at = key.indexOf(plan.delimiter, plan.prefix.length)
  return at < 0 ? undefined : key.slice(0, at + 1)
}

/**
 * Builds one page from entries given in key order. Entries before the prefix or the resume point
 * are ignored, so callers may over-supply; the first entry past the prefix range ends the page.
 */
export async function collectPage(
  plan: ListingPlan,
  entries: Iterable<ListedObject> | AsyncIterable<ListedObject>,
): Promise<ListPage> {
  const objects: ListedObject[] = []
  const prefixes: string[] = []
  let count = 0
  let last: string | undefined
  for await (const entry of entries) {
    if (!entry.key.startsWith(plan.prefix)) {
      if (compareKeys(entry.key, plan.prefix) > 0) break
      continue
    }
    if (isBeforeStart(plan, entry.key)) continue
    const folded = foldedPrefix(plan, entry.key)
    if (folded !== undefined && folded === prefixes[prefixes.length - 1]) continue
    if (count === plan.limit) return { objects, prefixes, ...(last ? { cursor: last } : {}) }
    count++
    if (folded === undefined) {
      objects.push({ key: entry.key, size: entry.size })
      last = `o:${entry.key}`
    } else {
      prefixes.push(folded)
      last = `p:${folded}`
    }
  }
  return { objects, prefixes }
}

/** Rejects contradictory conditions (shared by adapters). */
export function checkPutOptions(key: string, options: PutOptions): void {
  if (options.ifNoneMatch !== undefined && options.ifMatch !== undefined) {
    throw new TurnlineError('invalid_input', 'ifNoneMatch and ifMatch are exclusive', {
      logDetails: { key },
    })
  }
  if (options.ifMatch === '') {
    throw new TurnlineError('invalid_input', 'ifMatch must be a non-empty etag', {
      logDetails: { key },
    })
  }
}

/** Rejects an unusable append (shared by the adapters that append). */
export function checkAppendOptions(key: string, options: AppendOptions): void {
  const { at, ifSize, ifVersion } = options
  const offset = (n: number) => Number.isSafeInteger(n) && n >= 0
  if (!offset(at) || !offset(ifSize) || at > ifSize || ifVersion === '') {
    throw new TurnlineError(
      'invalid_input',
      'an append needs 0 <= at <= ifSize (whole bytes) and a non-empty ifVersion when given',
      { logDetails: { key } },
    )
  }
}

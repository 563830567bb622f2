import type { ObjectStore } from '../ports/object-store.ts'

/**
 * How many keys lie under `prefix`, counted only as far as `upTo`: pages are listed until that
 * many are seen or none are left, so a cap check costs one LIST per 1,000 keys of the cap, never
 * a walk of everything a tenant has. Answers min(keys, upTo) or more (a whole page is counted).
 */
export async function countKeys(store: ObjectStore, prefix: string, upTo: number): Promise<number> {
  let counted = 0
  let cursor: string | undefined
  do {
    const page = await store.list(prefix, {
      limit: Math.min(1000, Math.max(1, upTo - counted)),
      ...(cursor ? { cursor } : {}),
    })
    counted += page.objects.length
    cursor = page.cursor
  } while (cursor && counted < upTo)
  return counted
}

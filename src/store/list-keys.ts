import type { ObjectStore } from '../ports/object-store.ts'

/**
 * The keys under `prefix` (without it), listed only as far as `upTo`: pages are listed until
 * that many are seen or none are left, so a cap check costs one LIST per 1,000 keys of the cap,
 * never a walk of everything a tenant has. Answers min(keys, upTo) keys or more (a whole page).
 */
export async function listKeys(
  store: ObjectStore,
  prefix: string,
  upTo: number,
): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  do {
    const page = await store.list(prefix, {
      limit: Math.min(1000, Math.max(1, upTo - keys.length)),
      ...(cursor ? { cursor } : {}),
    })
    for (const { key } of page.objects) keys.push(key.slice(prefix.length))
    cursor = page.cursor
  } while (cursor && keys.length < upTo)
  return keys
}

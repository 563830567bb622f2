import type { ListedObject, ListOptions, ListPage, ObjectStore } from '../ports/object-store.ts'

/** Every key under `prefix`, following pages. */
export async function listAll(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, 'cursor'> = {},
): Promise<ListPage> {
  const objects: ListedObject[] = []
  const prefixes: string[] = []
  let cursor: string | undefined
  do {
    const page = await store.list(prefix, { ...options, ...(cursor ? { cursor } : {}) })
    objects.push(...page.objects)
    prefixes.push(...page.prefixes)
    cursor = page.cursor
  } while (cursor)
  return { objects, prefixes }
}

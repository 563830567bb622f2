/**
 * ObjectStore: the only durable storage port. Keys are '/'-separated strings; bodies are bytes.
 *
 * Conditional writes are the whole basis of ordering:
 *  - `ifNoneMatch: '*'` creates only; an existing key → TurnlineError('conflict').
 *  - `ifMatch: etag` replaces only that version; a different version → 'conflict',
 *    a missing key → 'not_found'.
 * Adapters map their backend's errors (S3 412 and 409 ConditionalRequestConflict → 'conflict',
 * 404 → 'not_found' or a null get, transport faults → 'storage_unavailable').
 */
export interface StoredObject {
  body: Uint8Array
  /** Opaque version tag, usable with `ifMatch`. */
  etag: string
}

export interface PutOptions {
  ifNoneMatch?: '*'
  ifMatch?: string
  contentType?: string
}

export interface ListOptions {
  /** Only keys strictly after this one (lexicographic). */
  startAfter?: string
  /** Opaque continuation token from a previous page. */
  cursor?: string
  /** Page size; adapters cap it at 1000. */
  limit?: number
  /** With '/', keys below the next '/' after the prefix fold into `prefixes`. */
  delimiter?: '/'
}

export interface ListedObject {
  key: string
  size: number
}

export interface ListPage {
  objects: ListedObject[]
  /** Folded "folders" (each ends with the delimiter), only with `delimiter`. */
  prefixes: string[]
  /** Present when more keys follow; pass as `cursor`. */
  cursor?: string
}

export interface ObjectStore {
  get(key: string): Promise<StoredObject | null>
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }>
  list(prefix: string, options?: ListOptions): Promise<ListPage>
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>
}

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

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
  /**
   * Stores that append (`ObjectStore.append`): which object this is — it stays the same while
   * the object only grows by appends, and changes when a put replaces it. Usable as `ifVersion`.
   */
  version?: string
}

export interface PutOptions {
  ifNoneMatch?: '*'
  ifMatch?: string
  contentType?: string
  /**
   * With `ifNoneMatch: '*'`: called once the object can be read under its key, when the store
   * still has a step to make it durable (the fs store: its folder's fsync), so the caller can
   * overlap work that only needs the name with that step. The put still settles only when it is
   * done, and rejects if it fails. Stores without such a step need not call it.
   */
  onNamed?: () => void
}

/** Where an append goes (`ObjectStore.append`). */
export interface AppendOptions {
  /** Byte offset the bytes are written at: the end of what the caller knows to be good. */
  at: number
  /**
   * The object's size now, as the caller last saw it (0 also matches a missing object, which
   * is created). Anything else is a 'conflict'. When it is above `at`, the bytes after `at`
   * are replaced: that is how a torn tail is cut off.
   */
  ifSize: number
  /** The object's `version` the caller knows: another one (replaced by a put) is a 'conflict'. */
  ifVersion?: string
  /**
   * `false`: the bytes need not be durable when the append returns (the store may leave them to
   * the OS); a later durable append to the object — of no bytes, to only sync — makes everything
   * it holds durable. For derived objects whose readers check them against the record. Default:
   * durable, like a put. A file an append creates gets its name made durable either way.
   */
  durable?: boolean
}

export interface AppendResult {
  /** The object's size afterwards: `at` + the bytes appended. */
  size: number
  version: string
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
  /**
   * Optional: the least a stored object takes (a filesystem's block), so a body up to this many
   * bytes costs the same to keep whatever its size; a writer need not compress one (the fs store).
   * Absent: every byte counts (S3, memory).
   */
  readonly allocationBytes?: number
  get(key: string): Promise<StoredObject | null>
  /** `version`: from stores that append (see `StoredObject.version`). */
  put(
    key: string,
    body: Uint8Array,
    options?: PutOptions,
  ): Promise<{ etag: string; version?: string }>
  list(prefix: string, options?: ListOptions): Promise<ListPage>
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>
  /**
   * Optional capability: writes `bytes` at `at` and makes them the object's end, without
   * rewriting what comes before — durable when it returns, like a put (unless `durable: false`). Only stores that can
   * grow a file in place have it (the fs store; the memory store, which stands in for it in
   * tests); on the others (S3) callers rewrite the whole object instead.
   *
   * The size and version checks and the write are not one atomic step against a writer in
   * another process: callers must write bytes that are a function of the offset (the same bytes
   * at the same place, whoever writes them), so a race rewrites identical bytes at worst. A
   * reader may see an append in progress as a partial last line; after a crash the object may
   * end in one (a torn append), which the next writer cuts off with `ifSize` above `at`.
   */
  append?(key: string, bytes: Uint8Array, options: AppendOptions): Promise<AppendResult>
}

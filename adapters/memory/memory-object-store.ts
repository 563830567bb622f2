/**
 * In-memory ObjectStore (Web-standard only: runs in Node, workerd and Deno). Every write gets a
 * fresh etag, even when the bytes are identical. Each operation checks and mutates in one
 * synchronous step, so conditional writes are atomic within the isolate. Bodies are copied in
 * and out; callers can never alias stored bytes.
 */
import { TurnlineError } from '../../src/contract/errors.ts'
import type {
  ListedObject,
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  StoredObject,
} from '../../src/ports/object-store.ts'
import {
  checkPutOptions,
  collectPage,
  compareKeys,
  planListing,
} from '../../src/ports/object-store-listing.ts'

interface Entry {
  body: Uint8Array
  etag: string
}

export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<string, Entry>()
  readonly #tag = crypto.randomUUID().slice(0, 8)
  #version = 0
  /** Sorted key list, built on the first listing, then kept up to date as keys come and go. */
  #sorted: string[] | undefined

  async get(key: string): Promise<StoredObject | null> {
    checkKey(key)
    const entry = this.#objects.get(key)
    return entry ? { body: entry.body.slice(), etag: entry.etag } : null
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    checkKey(key)
    checkPutOptions(key, options)
    const current = this.#objects.get(key)
    if (options.ifNoneMatch === '*' && current) {
      throw new TurnlineError('conflict', `Object already exists: ${key}`, { details: { key } })
    }
    if (options.ifMatch !== undefined) {
      if (!current) {
        throw new TurnlineError('not_found', `No object to replace: ${key}`, { details: { key } })
      }
      if (current.etag !== options.ifMatch) {
        throw new TurnlineError('conflict', `Object changed since it was read: ${key}`, {
          details: { key },
        })
      }
    }
    const etag = `"${this.#tag}-${++this.#version}"`
    if (!current && this.#sorted) this.#sorted = this.#sorted.toSpliced(this.#position(key), 0, key)
    this.#objects.set(key, { body: body.slice(), etag })
    return { etag }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const plan = planListing(prefix, options)
    return collectPage(plan, this.#entriesFrom(plan.after ?? prefix))
  }

  async delete(key: string): Promise<void> {
    checkKey(key)
    if (this.#objects.delete(key) && this.#sorted) {
      this.#sorted = this.#sorted.toSpliced(this.#position(key), 1)
    }
  }

  /** Number of stored objects (for tests and benchmarks). */
  get size(): number {
    return this.#objects.size
  }

  /**
   * Index of the first sorted key not before `key`. The sorted keys are kept up to date as keys
   * come and go (copy on write: a listing in progress keeps iterating the array it started on).
   */
  #position(key: string): number {
    const sorted = this.#sorted ?? []
    let low = 0
    let high = sorted.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (compareKeys(sorted[mid]!, key) < 0) low = mid + 1
      else high = mid
    }
    return low
  }

  /** Entries in key order, starting at the first key not before `from`. */
  *#entriesFrom(from: string): Generator<ListedObject> {
    this.#sorted ??= [...this.#objects.keys()].sort(compareKeys)
    const sorted = this.#sorted
    for (let i = this.#position(from); i < sorted.length; i++) {
      const key = sorted[i]!
      const entry = this.#objects.get(key)
      if (entry) yield { key, size: entry.body.length }
    }
  }
}

function checkKey(key: string): void {
  if (key.length === 0) throw new TurnlineError('invalid_input', 'Object key must not be empty')
}

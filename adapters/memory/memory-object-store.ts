/**
 * In-memory ObjectStore (Web-standard only: runs in Node, workerd and Deno). Every write gets a
 * fresh etag, even when the bytes are identical. Each operation checks and mutates in one
 * synchronous step, so conditional writes are atomic within the isolate. Bodies are copied in
 * and out; callers can never alias stored bytes. It appends as the fs store does (it stands in
 * for it in tests): an object keeps its `version` while it grows by appends, and a put gives it
 * a new one. `appendable: false` makes a store without appends, like S3.
 */
import { TurnlineError } from '../../src/contract/errors.ts'
import type {
  AppendOptions,
  AppendResult,
  ListedObject,
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  StoredObject,
} from '../../src/ports/object-store.ts'
import { compareKeys } from '../../src/shared/compare-keys.ts'
import {
  checkAppendOptions,
  checkPutOptions,
  collectPage,
  planListing,
} from '../shared/object-store-listing.ts'

interface Entry {
  /** The bytes are `data[0, length)`; appends fill the spare room after them. */
  data: Uint8Array
  length: number
  etag: string
  /** Kept by appends, new with every put. */
  version: string
}

export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<string, Entry>()
  readonly #tag = crypto.randomUUID().slice(0, 8)
  #version = 0
  /** Sorted key list, built on the first listing, then kept up to date as keys come and go. */
  #sorted: string[] | undefined

  constructor(options: { appendable?: boolean } = {}) {
    if (options.appendable === false) this.append = undefined
  }

  async get(key: string): Promise<StoredObject | null> {
    checkKey(key)
    const entry = this.#objects.get(key)
    if (!entry) return null
    const body = entry.data.slice(0, entry.length)
    return this.append
      ? { body, etag: entry.etag, version: entry.version }
      : { body, etag: entry.etag }
  }

  async put(
    key: string,
    body: Uint8Array,
    options: PutOptions = {},
  ): Promise<{ etag: string; version?: string }> {
    checkKey(key)
    checkPutOptions(key, options)
    const current = this.#objects.get(key)
    if (options.ifNoneMatch === '*' && current) {
      throw new TurnlineError('conflict', 'Object already exists', { logDetails: { key } })
    }
    if (options.ifMatch !== undefined) {
      if (!current) {
        throw new TurnlineError('not_found', 'No object to replace', { logDetails: { key } })
      }
      if (current.etag !== options.ifMatch) {
        throw new TurnlineError('conflict', 'Object changed since it was read', {
          logDetails: { key },
        })
      }
    }
    const etag = this.#nextEtag()
    const version = `v${this.#version}`
    if (!current && this.#sorted) this.#sorted = this.#sorted.toSpliced(this.#position(key), 0, key)
    this.#objects.set(key, { data: body.slice(), length: body.length, etag, version })
    return this.append ? { etag, version } : { etag }
  }

  append? = async (
    key: string,
    bytes: Uint8Array,
    options: AppendOptions,
  ): Promise<AppendResult> => {
    checkKey(key)
    checkAppendOptions(key, options)
    const current = this.#objects.get(key)
    const size = current?.length ?? 0
    if (size !== options.ifSize || (options.ifVersion ?? current?.version) !== current?.version) {
      throw new TurnlineError('conflict', 'Object changed since it was read', {
        logDetails: { key, size, expected: options.ifSize },
      })
    }
    const length = options.at + bytes.length
    let entry = current
    if (!entry) {
      entry = { data: new Uint8Array(0), length: 0, etag: '', version: `v${++this.#version}` }
      if (this.#sorted) this.#sorted = this.#sorted.toSpliced(this.#position(key), 0, key)
      this.#objects.set(key, entry)
    }
    if (length > entry.data.length) {
      const grown = new Uint8Array(Math.max(length, entry.data.length * 2, 256))
      grown.set(entry.data.subarray(0, options.at))
      entry.data = grown
    }
    entry.data.set(bytes, options.at)
    entry.length = length
    entry.etag = this.#nextEtag()
    return { size: length, version: entry.version }
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

  #nextEtag(): string {
    return `"${this.#tag}-${++this.#version}"`
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
      if (entry) yield { key, size: entry.length }
    }
  }
}

function checkKey(key: string): void {
  if (key.length === 0) throw new TurnlineError('invalid_input', 'Object key must not be empty')
}

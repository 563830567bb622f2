/**
 * ObjectStore on the S3 API: AWS S3, R2, MinIO, moto. Conditional writes use PutObject
 * `If-None-Match: *` and `If-Match: <etag>`; the backend must support both (AWS S3 does since
 * 2024). Requests go through `S3Rest` (SigV4 on Web Crypto, the entry's fetch), so it runs on
 * every runtime — Node, Lambda, workerd, Deno — without the AWS SDK.
 *
 * Note on retries: transport faults, 5xx and throttling are retried (`S3Rest`, then the call's
 * deadline). A conditional PUT whose first attempt landed but whose answer was lost comes back as
 * 'conflict' on the retry; callers that must tell "I won" from "someone else won" read the object
 * back (the session log does this through its idempotency key).
 */
import { TurnlineError } from '../../src/contract/errors.ts'
import type {
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  StoredObject,
} from '../../src/ports/object-store.ts'
import {
  checkDeadline,
  DEFAULT_STORAGE_DEADLINE,
  type IoDeadline,
  withDeadline,
} from '../shared/io-deadline.ts'
import { checkPutOptions, MAX_LIST_LIMIT } from '../shared/object-store-listing.ts'
import { isMissingObject, s3Error } from './s3-errors.ts'
import { type S3Credentials, S3Rest } from './s3-rest.ts'
import { parseListResult } from './s3-xml.ts'
import type { SigV4Hashes } from './sigv4.ts'

export interface S3ObjectStoreOptions {
  bucket: string
  /** Key prefix inside the bucket (a folder: '/' is appended when missing). */
  prefix?: string
  region?: string
  /** Custom endpoint (R2, MinIO, moto), e.g. 'http://127.0.0.1:9000'. */
  endpoint?: string
  /** Path-style URLs (`endpoint/bucket/key`); needed by most emulators. */
  forcePathStyle?: boolean
  /**
   * Keys, or a source of them asked before each request (the AWS credential chain the Node and
   * Lambda entries give: environment, profile, SSO, web identity, container and instance roles).
   */
  credentials?: S3Credentials
  /** How requests are sent (default: the global fetch). */
  fetch?: typeof fetch
  /** The signature's and the bodies' hashes (default: Web Crypto's). */
  hashes?: SigV4Hashes
  /** A ready client; when given, the connection options above are ignored. */
  client?: S3Rest
  /**
   * Deadline of every call: an attempt is abandoned (aborted) after `attemptMs` and retried
   * while `budgetMs` lasts, then the call fails `storage_unavailable` (503, Retry-After).
   * Default 5 s per attempt, 15 s per call.
   */
  deadline?: IoDeadline
}

export class S3ObjectStore implements ObjectStore {
  readonly client: S3Rest
  readonly bucket: string
  readonly #base: string
  /** The deadline of every call. */
  readonly deadline: IoDeadline

  constructor(options: S3ObjectStoreOptions) {
    this.bucket = options.bucket
    this.deadline = options.deadline ?? DEFAULT_STORAGE_DEADLINE
    checkDeadline('S3ObjectStore deadline', this.deadline)
    const prefix = options.prefix ?? ''
    this.#base = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`
    // One checksum of every PUT body: its SHA-256, signed (`x-amz-content-sha256`), which S3
    // checks against what it receives; no CRC32 beside it (docs/performance.md).
    this.client =
      options.client ??
      new S3Rest({
        bucket: options.bucket,
        region: options.region ?? 'us-east-1',
        endpoint: options.endpoint,
        forcePathStyle: options.forcePathStyle,
        credentials: options.credentials,
        fetch: options.fetch,
        hashes: options.hashes,
      })
  }

  async get(key: string): Promise<StoredObject | null> {
    const Key = this.#key(key)
    return this.#call('get', async (signal) => {
      try {
        const response = await this.client.send({ method: 'GET', key: Key, signal })
        const etag = requireEtag(response.headers.get('etag'), 'get', key)
        return { body: new Uint8Array(await response.arrayBuffer()), etag }
      } catch (error) {
        if (isMissingObject(error)) return null
        throw s3Error(error, 'get', key)
      }
    })
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const Key = this.#key(key)
    checkPutOptions(key, options)
    const headers: Record<string, string> = {
      ...(options.contentType ? { 'content-type': options.contentType } : {}),
      ...(options.ifNoneMatch ? { 'if-none-match': options.ifNoneMatch } : {}),
      ...(options.ifMatch !== undefined ? { 'if-match': options.ifMatch } : {}),
    }
    return this.#call('put', async (signal) => {
      try {
        const response = await this.client.send({ method: 'PUT', key: Key, headers, body, signal })
        await response.arrayBuffer()
        return { etag: requireEtag(response.headers.get('etag'), 'put', key) }
      } catch (error) {
        throw s3Error(error, 'put', key)
      }
    })
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = options.limit ?? MAX_LIST_LIMIT
    if (!Number.isInteger(limit) || limit < 1) {
      throw new TurnlineError('invalid_input', 'List limit must be a positive integer', {
        details: { limit },
      })
    }
    const base = this.#base
    const fullPrefix = base + prefix
    const query: [string, string][] = [
      ['list-type', '2'],
      ['max-keys', String(Math.min(limit, MAX_LIST_LIMIT))],
    ]
    if (fullPrefix) query.push(['prefix', fullPrefix])
    if (options.delimiter) query.push(['delimiter', options.delimiter])
    if (options.cursor) query.push(['continuation-token', options.cursor])
    else if (options.startAfter !== undefined)
      query.push(['start-after', base + options.startAfter])
    return this.#call('list', async (signal) => {
      try {
        const response = await this.client.send({ method: 'GET', query, signal })
        const page = parseListResult(await response.text())
        const objects = page.contents.flatMap((item) =>
          item.key.startsWith(base) ? [{ key: item.key.slice(base.length), size: item.size }] : [],
        )
        const prefixes = page.commonPrefixes.flatMap((prefix) =>
          prefix.startsWith(base) ? [prefix.slice(base.length)] : [],
        )
        const cursor = page.isTruncated ? page.nextContinuationToken : undefined
        return { objects, prefixes, ...(cursor ? { cursor } : {}) }
      } catch (error) {
        throw s3Error(error, 'list', prefix)
      }
    })
  }

  async delete(key: string): Promise<void> {
    const Key = this.#key(key)
    await this.#call('delete', async (signal) => {
      try {
        await (await this.client.send({ method: 'DELETE', key: Key, signal })).arrayBuffer()
      } catch (error) {
        if (isMissingObject(error)) return
        throw s3Error(error, 'delete', key)
      }
    })
  }

  #call<T>(operation: string, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(
      {
        deadline: this.deadline,
        code: 'storage_unavailable',
        service: 'the session store',
        operation,
      },
      attempt,
    )
  }

  #key(key: string): string {
    if (key.length === 0) throw new TurnlineError('invalid_input', 'Object key must not be empty')
    return this.#base + key
  }
}

function requireEtag(etag: string | null, action: string, key: string): string {
  if (etag) return etag
  throw new TurnlineError('storage_unavailable', `S3 ${action} returned no ETag`, {
    details: { action },
    logDetails: { key },
    retryable: false,
  })
}

/**
 * ObjectStore on the S3 API (`@aws-sdk/client-s3`): AWS S3, R2, MinIO, moto. Conditional writes
 * use PutObject `If-None-Match: *` and `If-Match: <etag>`; the backend must support both (AWS S3
 * does since 2024). Uses only Web-standard APIs itself, so it also runs in workerd and Deno.
 *
 * Note on retries: the SDK retries transport faults and 5xx. A conditional PUT whose first
 * attempt landed but whose answer was lost comes back as 'conflict' on the retry; callers that
 * must tell "I won" from "someone else won" read the object back (the session log does this
 * through its idempotency key).
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { TurnlineError } from '../../src/contract/errors.ts'
import { PRODUCT_NAME, PRODUCT_VERSION } from '../../src/contract/product.ts'
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

export interface S3ObjectStoreOptions {
  bucket: string
  /** Key prefix inside the bucket (a folder: '/' is appended when missing). */
  prefix?: string
  region?: string
  /** Custom endpoint (R2, MinIO, moto), e.g. 'http://127.0.0.1:9000'. */
  endpoint?: string
  /** Path-style URLs (`endpoint/bucket/key`); needed by most emulators. */
  forcePathStyle?: boolean
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  /** A ready client; when given, region/endpoint/forcePathStyle/credentials are ignored. */
  client?: S3Client
  /**
   * Deadline of every call: an attempt is abandoned (aborted) after `attemptMs` and retried
   * while `budgetMs` lasts, then the call fails `storage_unavailable` (503, Retry-After).
   * Default 5 s per attempt, 15 s per call.
   */
  deadline?: IoDeadline
}

/**
 * The User-Agent of every S3 request. The SDK's Node default names the OS release (`os.release()`),
 * which Deno refuses without `--allow-sys`: every call then failed before it left the process. The
 * same short agent on every runtime instead.
 */
const turnlineUserAgent = async (): Promise<[string, string?][]> => [
  [PRODUCT_NAME, PRODUCT_VERSION],
  ['lang/js'],
]

export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client
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
    this.client =
      options.client ??
      new S3Client({
        region: options.region ?? 'us-east-1',
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.forcePathStyle !== undefined ? { forcePathStyle: options.forcePathStyle } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        defaultUserAgentProvider: turnlineUserAgent,
        // No CRC32 of every PUT body on top of its SHA-256: the signature already covers the
        // body's SHA-256 (`x-amz-content-sha256`), which S3 checks against what it receives.
        // The extra checksum cost both ends CPU on every commit (docs/performance.md).
        requestChecksumCalculation: 'WHEN_REQUIRED',
      })
  }

  async get(key: string): Promise<StoredObject | null> {
    const Key = this.#key(key)
    return this.#call('get', async (abortSignal) => {
      try {
        const response = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key }),
          { abortSignal },
        )
        const body = response.Body ? await response.Body.transformToByteArray() : new Uint8Array(0)
        return { body, etag: requireEtag(response.ETag, 'get', key) }
      } catch (error) {
        if (isMissingObject(error)) return null
        throw s3Error(error, 'get', key)
      }
    })
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const Key = this.#key(key)
    checkPutOptions(key, options)
    return this.#call('put', async (abortSignal) => {
      try {
        const response = await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key,
            Body: body,
            ContentLength: body.length,
            ...(options.contentType ? { ContentType: options.contentType } : {}),
            ...(options.ifNoneMatch ? { IfNoneMatch: options.ifNoneMatch } : {}),
            ...(options.ifMatch !== undefined ? { IfMatch: options.ifMatch } : {}),
          }),
          { abortSignal },
        )
        return { etag: requireEtag(response.ETag, 'put', key) }
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
    const command = new ListObjectsV2Command({
      Bucket: this.bucket,
      MaxKeys: Math.min(limit, MAX_LIST_LIMIT),
      ...(fullPrefix ? { Prefix: fullPrefix } : {}),
      ...(options.delimiter ? { Delimiter: options.delimiter } : {}),
      ...(options.cursor
        ? { ContinuationToken: options.cursor }
        : options.startAfter !== undefined
          ? { StartAfter: base + options.startAfter }
          : {}),
    })
    return this.#call('list', async (abortSignal) => {
      try {
        const response = await this.client.send(command, { abortSignal })
        const objects = (response.Contents ?? []).flatMap((item) =>
          item.Key?.startsWith(base)
            ? [{ key: item.Key.slice(base.length), size: item.Size ?? 0 }]
            : [],
        )
        const prefixes = (response.CommonPrefixes ?? []).flatMap((item) =>
          item.Prefix?.startsWith(base) ? [item.Prefix.slice(base.length)] : [],
        )
        const cursor = response.IsTruncated ? response.NextContinuationToken : undefined
        return { objects, prefixes, ...(cursor ? { cursor } : {}) }
      } catch (error) {
        throw s3Error(error, 'list', prefix)
      }
    })
  }

  async delete(key: string): Promise<void> {
    const Key = this.#key(key)
    await this.#call('delete', async (abortSignal) => {
      try {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }), {
          abortSignal,
        })
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

function requireEtag(etag: string | undefined, action: string, key: string): string {
  if (etag) return etag
  throw new TurnlineError('storage_unavailable', `S3 ${action} returned no ETag`, {
    details: { action },
    logDetails: { key },
    retryable: false,
  })
}

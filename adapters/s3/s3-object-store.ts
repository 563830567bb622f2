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
import type {
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  StoredObject,
} from '../../src/ports/object-store.ts'
import { checkPutOptions, MAX_LIST_LIMIT } from '../../src/ports/object-store-listing.ts'

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
}

export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client
  readonly bucket: string
  readonly #base: string

  constructor(options: S3ObjectStoreOptions) {
    this.bucket = options.bucket
    const prefix = options.prefix ?? ''
    this.#base = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`
    this.client =
      options.client ??
      new S3Client({
        region: options.region ?? 'us-east-1',
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.forcePathStyle !== undefined ? { forcePathStyle: options.forcePathStyle } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
      })
  }

  async get(key: string): Promise<StoredObject | null> {
    const Key = this.#key(key)
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }))
      const body = response.Body ? await response.Body.transformToByteArray() : new Uint8Array(0)
      return { body, etag: requireEtag(response.ETag, 'get', key) }
    } catch (error) {
      if (isMissingObject(error)) return null
      throw s3Error(error, 'get', key)
    }
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const Key = this.#key(key)
    checkPutOptions(key, options)
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
      )
      return { etag: requireEtag(response.ETag, 'put', key) }
    } catch (error) {
      throw s3Error(error, 'put', key)
    }
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
    try {
      const response = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          MaxKeys: Math.min(limit, MAX_LIST_LIMIT),
          ...(fullPrefix ? { Prefix: fullPrefix } : {}),
          ...(options.delimiter ? { Delimiter: options.delimiter } : {}),
          ...(options.cursor
            ? { ContinuationToken: options.cursor }
            : options.startAfter !== undefined
              ? { StartAfter: base + options.startAfter }
              : {}),
        }),
      )
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
  }

  async delete(key: string): Promise<void> {
    const Key = this.#key(key)
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }))
    } catch (error) {
      if (isMissingObject(error)) return
      throw s3Error(error, 'delete', key)
    }
  }

  #key(key: string): string {
    if (key.length === 0) throw new TurnlineError('invalid_input', 'Object key must not be empty')
    return this.#base + key
  }
}

function requireEtag(etag: string | undefined, action: string, key: string): string {
  if (etag) return etag
  throw new TurnlineError('storage_unavailable', `S3 ${action} returned no ETag for ${key}`, {
    details: { key, action },
    retryable: false,
  })
}

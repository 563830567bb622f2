import { PRODUCT_NAME, PRODUCT_VERSION } from '../../src/contract/product.ts'
import { abortableSleep } from '../../src/shared/abortable-sleep.ts'
import { type Backoff, backoffMs } from '../../src/shared/backoff.ts'
import { responseError, S3CredentialsMissing, S3ResponseError } from './s3-response-error.ts'
import {
  type AwsCredentials,
  EMPTY_SHA256,
  type SigV4Hashes,
  SigV4Signer,
  uriEncode,
} from './sigv4.ts'

/** Credentials as they are, or a source asked before every request (it caches and refreshes). */
export type S3Credentials = AwsCredentials | (() => Promise<AwsCredentials>)

export interface S3RestOptions {
  bucket: string
  region: string
  /** Custom endpoint (R2, MinIO, moto), e.g. 'http://127.0.0.1:9000'; default AWS S3's. */
  endpoint?: string | undefined
  /** Path-style URLs (`endpoint/bucket/key`); needed by most emulators. */
  forcePathStyle?: boolean | undefined
  credentials?: S3Credentials | undefined
  /** How requests are sent (Node's entries: adapters/node-http's fetch, kept alive). */
  fetch?: typeof fetch | undefined
  /** Attempts per request, the first included (default 3, as the AWS SDK's standard mode). */
  maxAttempts?: number | undefined
  /** The signature's and the body's hashes (Node's entries: node:crypto's; default Web Crypto's). */
  hashes?: SigV4Hashes | undefined
}

export interface S3Request {
  method: 'GET' | 'PUT' | 'HEAD' | 'DELETE'
  /** The object's full key; none for a request on the bucket itself. */
  key?: string
  query?: readonly (readonly [string, string])[]
  headers?: Readonly<Record<string, string>>
  body?: Uint8Array
  signal?: AbortSignal | undefined
}

/** Answers retried as the AWS SDK's standard mode retries them: throttling and transient faults. */
const THROTTLING = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'RequestThrottled',
  'SlowDown',
  'PriorRequestNotComplete',
])
const TRANSIENT = new Set(['RequestTimeout', 'RequestTimeoutException', 'InternalError'])
const TRANSIENT_STATUS = new Set([500, 502, 503, 504])
/** Refusals of a request signed at the wrong time: the clock is corrected from `Date`, once. */
const CLOCK_SKEW = new Set([
  'RequestTimeTooSkewed',
  'RequestExpired',
  'RequestInTheFuture',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'AuthFailure',
])
const SKEW_MS = 5 * 60_000
/** Full jitter up to 20 s, as the SDK's standard mode; throttling answers wait from a longer step. */
const RETRY: Backoff = { firstMs: 100, maxMs: 20_000, jitter: 'full' }
const THROTTLED_RETRY: Backoff = { ...RETRY, firstMs: 500 }

/**
 * The S3 REST API for one bucket, on a given fetch: each request signed with SigV4
 * (`x-amz-content-sha256`: the body's SHA-256, which S3 checks), retried on transport faults,
 * 5xx, throttling and a skewed clock as the AWS SDK's standard mode does (3 attempts, full-jitter
 * backoff from 100 ms, 500 ms after throttling). Answers that are not 2xx throw
 * `S3ResponseError` with S3's error code; the caller maps them (s3-errors.ts).
 */
export class S3Rest {
  readonly bucket: string
  readonly region: string
  /** Requests go to `endpoint/bucket/key` (otherwise `bucket.endpoint/key`). */
  readonly pathStyle: boolean
  readonly #origin: string
  readonly #host: string
  readonly #bucketPath: string
  readonly #signer: SigV4Signer
  readonly #credentials: S3Credentials | undefined
  readonly #fetch: typeof fetch
  readonly #maxAttempts: number
  #clockOffsetMs = 0
  #requests = 0

  constructor(options: S3RestOptions) {
    this.bucket = options.bucket
    this.region = options.region
    const endpoint = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`)
    const virtual =
      !options.forcePathStyle &&
      !isIpAddress(endpoint.hostname) &&
      isVirtualHostable(options.bucket, endpoint.protocol)
    this.pathStyle = !virtual
    const host = virtual ? `${options.bucket}.${endpoint.host}` : endpoint.host
    this.#origin = `${endpoint.protocol}//${host}`
    this.#host = new URL(this.#origin).host
    const base = endpoint.pathname.replace(/\/+$/, '')
    this.#bucketPath = virtual ? base : `${base}/${uriEncode(options.bucket)}`
    this.#signer = new SigV4Signer(options.region, 's3', options.hashes)
    this.#credentials = options.credentials
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init))
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 3)
  }

  /** HTTP requests sent so far (each attempt is one). */
  get requestCount(): number {
    return this.#requests
  }

  /**
   * Sends a request until it is answered 2xx (returned, body unread) or fails for good (throws
   * `S3ResponseError`, or the transport's error). A 404 or 412 answer is thrown like any other.
   */
  async send(request: S3Request): Promise<Response> {
    const path = this.#pathOf(request.key)
    const query = request.query ?? []
    const url = this.urlOf(request.key, query)
    const body = request.body
    const payloadHash =
      body === undefined ? EMPTY_SHA256 : await this.#signer.hashes.sha256Hex(bufferOf(body))
    for (let attempt = 1; ; attempt++) {
      const credentials = await this.#credentialsNow()
      const headers = await this.#signer.sign(
        {
          method: request.method,
          host: this.#host,
          path,
          query,
          headers: { ...request.headers, 'x-amz-content-sha256': payloadHash },
          payloadHash,
        },
        credentials,
        new Date(Date.now() + this.#clockOffsetMs),
      )
      headers['user-agent'] = `${PRODUCT_NAME}/${PRODUCT_VERSION}`
      let answer: Response
      try {
        this.#requests += 1
        answer = await this.#fetch(url, {
          method: request.method,
          headers,
          // S3's redirects (another region) need a new signature: answered as they come.
          redirect: 'manual',
          ...(body === undefined ? {} : { body: bufferOf(body) }),
          ...(request.signal ? { signal: request.signal } : {}),
        })
      } catch (error) {
        if (request.signal?.aborted || attempt >= this.#maxAttempts) throw error
        await abortableSleep(backoffMs(attempt, RETRY), request.signal)
        continue
      }
      if (answer.ok) return answer
      const failure = await responseError(answer, request.method)
      if (attempt >= this.#maxAttempts) throw failure
      if (CLOCK_SKEW.has(failure.code) && this.#correctClock(answer)) continue
      const throttled = THROTTLING.has(failure.code) || failure.status === 429
      if (!throttled && !TRANSIENT.has(failure.code) && !TRANSIENT_STATUS.has(failure.status)) {
        throw failure
      }
      await abortableSleep(backoffMs(attempt, throttled ? THROTTLED_RETRY : RETRY), request.signal)
    }
  }

  /** Where a request for `key` (none: the bucket) goes. */
  urlOf(key?: string, query: S3Request['query'] = []): string {
    const search = query.map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`).join('&')
    return `${this.#origin}${this.#pathOf(key)}${search === '' ? '' : `?${search}`}`
  }

  #pathOf(key: string | undefined): string {
    return key === undefined
      ? this.#bucketPath || '/'
      : `${this.#bucketPath}/${uriEncode(key, true)}`
  }

  /**
   * Creates the bucket (self-hosted S3, tests), in the client's region (outside us-east-1 S3
   * wants it named in the body); a bucket of that name that exists already is not an error.
   */
  async createBucket(): Promise<'created' | 'exists'> {
    const body =
      this.region === 'us-east-1'
        ? undefined
        : new TextEncoder().encode(
            '<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
              `<LocationConstraint>${this.region}</LocationConstraint></CreateBucketConfiguration>`,
          )
    try {
      await (await this.send({ method: 'PUT', ...(body ? { body } : {}) })).arrayBuffer()
      return 'created'
    } catch (error) {
      const exists = ['BucketAlreadyOwnedByYou', 'BucketAlreadyExists']
      if (error instanceof S3ResponseError && exists.includes(error.code)) return 'exists'
      throw error
    }
  }

  /** Deletes the (empty) bucket. */
  async deleteBucket(): Promise<void> {
    await (await this.send({ method: 'DELETE' })).arrayBuffer()
  }

  async #credentialsNow(): Promise<AwsCredentials> {
    const source = this.#credentials
    if (source === undefined) throw new S3CredentialsMissing()
    return typeof source === 'function' ? source() : source
  }

  /** True when the server's clock is far from ours: later signatures use its time. */
  #correctClock(answer: Response): boolean {
    const date = Date.parse(answer.headers.get('date') ?? '')
    if (Number.isNaN(date)) return false
    const offset = date - Date.now()
    if (Math.abs(offset - this.#clockOffsetMs) < SKEW_MS) return false
    this.#clockOffsetMs = offset
    return true
  }
}

/** A bucket name usable as a host name label (no dots over https: the certificate's wildcard). */
function isVirtualHostable(bucket: string, protocol: string): boolean {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..')) return false
  if (/^\d+\.\d+\.\d+\.\d+$/.test(bucket)) return false
  return protocol === 'http:' || !bucket.includes('.')
}

/** An endpoint named by its address takes the bucket in the path, as the AWS SDK does. */
function isIpAddress(hostname: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(hostname) || hostname.startsWith('[')
}

/** The bytes as a fetch body and digest input (a view on its own ArrayBuffer). */
function bufferOf(body: Uint8Array): Uint8Array<ArrayBuffer> {
  return body.buffer instanceof ArrayBuffer
    ? (body as Uint8Array<ArrayBuffer>)
    : new Uint8Array(body)
}

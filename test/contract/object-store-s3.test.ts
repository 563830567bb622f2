import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { s3Error } from '../../adapters/s3/s3-errors.ts'
import { S3ObjectStore } from '../../adapters/s3/s3-object-store.ts'
import { S3ResponseError } from '../../adapters/s3/s3-response-error.ts'
import { S3Rest } from '../../adapters/s3/s3-rest.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { requireServices } from '../support/services.ts'
import { describeObjectStore } from './object-store.suite.ts'

const services = requireServices()
const bucket = `turnline-os-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
const connection = {
  region: services.s3.region,
  endpoint: services.s3.endpoint,
  forcePathStyle: true,
  credentials: {
    accessKeyId: services.s3.accessKeyId,
    secretAccessKey: services.s3.secretAccessKey,
  },
}
const client = new S3Rest({ bucket, ...connection })
let stores = 0

beforeAll(async () => {
  await client.createBucket()
})

afterAll(async () => {
  const everything = new S3ObjectStore({ bucket, client })
  for (const { key } of (await listAll(everything, '')).objects) await everything.delete(key)
  await client.deleteBucket()
})

/** Each test works under its own prefix of the shared bucket, and empties it afterwards. */
describeObjectStore('s3 (moto)', async () => {
  const store = new S3ObjectStore({ bucket, prefix: `t${++stores}`, client })
  return {
    store,
    cleanup: async () => {
      for (const { key } of (await listAll(store, '')).objects) await store.delete(key)
    },
  }
})

/** A store that builds its own client from connection options (no shared client). */
const ownClientStore = (prefix: string) => new S3ObjectStore({ bucket, prefix, ...connection })

describe('S3ObjectStore specifics', () => {
  const encode = (text: string) => new TextEncoder().encode(text)

  it('cannot append: the session store writes the rolled events in parts there', () => {
    const store: ObjectStore = new S3ObjectStore({ bucket, client })
    expect(store.append).toBeUndefined()
  })

  it('keeps each prefix to itself', async () => {
    const one = new S3ObjectStore({ bucket, prefix: 'iso/one', client })
    const two = new S3ObjectStore({ bucket, prefix: 'iso/one-two/', client })
    await one.put('k', encode('1'))
    await two.put('k', encode('2'))
    expect((await one.list('')).objects).toEqual([{ key: 'k', size: 1 }])
    expect((await two.list('', { delimiter: '/' })).objects).toEqual([{ key: 'k', size: 1 }])
    const root = new S3ObjectStore({ bucket, client })
    expect((await root.list('iso/', { delimiter: '/' })).prefixes).toEqual([
      'iso/one-two/',
      'iso/one/',
    ])
    await one.delete('k')
    await two.delete('k')
  })

  it('builds its own client from connection options', async () => {
    const store = ownClientStore('own-client')
    const { etag } = await store.put('k', encode('v'), { ifNoneMatch: '*' })
    expect((await store.get('k'))?.etag).toBe(etag)
    await store.delete('k')
  })

  it('signs each PUT body by its SHA-256 and adds no second checksum of it', async () => {
    const sent: Record<string, string>[] = []
    const watching: typeof fetch = (input, init) => {
      if (init?.method === 'PUT') sent.push({ ...(init.headers as Record<string, string>) })
      return fetch(input, init)
    }
    const store = new S3ObjectStore({
      bucket,
      prefix: 'one-checksum',
      ...connection,
      fetch: watching,
    })
    const body = encode('{"batch":1}')
    await store.put('k', body, { ifNoneMatch: '*' })
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body))
    const hex = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('')
    expect(sent).toHaveLength(1)
    expect(sent[0]?.['x-amz-content-sha256']).toBe(hex)
    expect(sent[0]?.authorization).toContain('if-none-match;x-amz-content-sha256;x-amz-date')
    expect(Object.keys(sent[0] ?? {}).filter((h) => h.startsWith('x-amz-checksum-'))).toEqual([])
    await store.delete('k')
  })

  it('reports a missing bucket as a permanent storage fault', async () => {
    const store = new S3ObjectStore({ ...connection, bucket: 'turnline-no-such-bucket' })
    await expect(store.put('k', encode('v'))).rejects.toMatchObject({
      code: 'storage_unavailable',
      retryable: false,
    })
  })

  it('reports an unreachable endpoint as a retryable storage fault', async () => {
    const offline = new S3Rest({
      bucket,
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    })
    const deadline = { attemptMs: 1_000, budgetMs: 1_500 }
    const store = new S3ObjectStore({ bucket, client: offline, deadline })
    await expect(store.get('k')).rejects.toMatchObject({
      code: 'storage_unavailable',
      retryable: true,
    })
    await expect(store.put('k', encode('v'), { ifNoneMatch: '*' })).rejects.toMatchObject({
      code: 'storage_unavailable',
      retryable: true,
    })
  })

  it('maps answers moto never gives (409, 5xx, throttling) like AWS documents them', () => {
    const sdk = (name: string, status: number) => new S3ResponseError(name, status, 'answer')
    const mapped = (error: unknown) => {
      const { code, retryable } = s3Error(error, 'put', 'k')
      return { code, retryable }
    }
    expect(mapped(sdk('ConditionalRequestConflict', 409))).toEqual({
      code: 'conflict',
      retryable: true,
    })
    expect(mapped(sdk('PreconditionFailed', 412))).toEqual({ code: 'conflict', retryable: true })
    expect(mapped(sdk('NoSuchKey', 404))).toEqual({ code: 'not_found', retryable: false })
    expect(mapped(sdk('InternalError', 500))).toEqual({
      code: 'storage_unavailable',
      retryable: true,
    })
    expect(mapped(sdk('SlowDown', 503))).toEqual({ code: 'storage_unavailable', retryable: true })
    expect(mapped(sdk('AccessDenied', 403))).toEqual({
      code: 'storage_unavailable',
      retryable: false,
    })
    expect(mapped(sdk('KeyTooLongError', 400))).toEqual({ code: 'invalid_input', retryable: false })
    const reset = new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } })
    expect(mapped(reset)).toEqual({
      code: 'storage_unavailable',
      retryable: true,
    })
  })
})

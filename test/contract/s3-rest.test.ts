import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'
import { S3ObjectStore } from '../../adapters/s3/s3-object-store.ts'
import { S3ResponseError } from '../../adapters/s3/s3-response-error.ts'
import { S3Rest } from '../../adapters/s3/s3-rest.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * The S3 client itself against moto: conditional writes and their typed errors, HEAD, ranges,
 * large bodies, keys that need encoding, credentials from a source, and the retries of
 * throttling and 5xx answers — over the global fetch and over fetch on node:http.
 */
const services = requireServices()
let bucket: Awaited<ReturnType<typeof createTestBucket>>
const keys = { accessKeyId: services.s3.accessKeyId, secretAccessKey: services.s3.secretAccessKey }
const encode = (text: string) => new TextEncoder().encode(text)

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'rest')
})
afterAll(async () => {
  await bucket?.destroy()
})

const rest = (options: Partial<ConstructorParameters<typeof S3Rest>[0]> = {}) =>
  new S3Rest({
    bucket: bucket.bucket,
    region: services.s3.region,
    endpoint: services.s3.endpoint,
    forcePathStyle: true,
    credentials: keys,
    ...options,
  })

async function failure(promise: Promise<unknown>): Promise<S3ResponseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof S3ResponseError)) throw new Error(`not an S3 answer: ${String(error)}`)
  return error
}

for (const [transport, fetchImpl] of [
  ['the global fetch', undefined],
  ['fetch on node:http', nodeFetch()],
] as const) {
  describe(`S3Rest on ${transport}`, () => {
    const client = () => rest(fetchImpl ? { fetch: fetchImpl } : {})
    const prefix = fetchImpl ? 'node' : 'global'

    it('refuses a create over an object and a replace of another version: 412, typed', async () => {
      const s3 = client()
      const key = `${prefix}/conditional`
      const put = (headers: Record<string, string>, text: string) =>
        s3.send({ method: 'PUT', key, headers, body: encode(text) })
      const first = (await put({ 'if-none-match': '*' }, 'one')).headers.get('etag')
      expect(first).toMatch(/^"[0-9a-f]+"$/)
      const again = await failure(put({ 'if-none-match': '*' }, 'two'))
      expect([again.code, again.status]).toEqual(['PreconditionFailed', 412])
      const stale = await failure(put({ 'if-match': '"0123456789abcdef0123456789abcdef"' }, 'x'))
      expect([stale.code, stale.status]).toEqual(['PreconditionFailed', 412])
      const second = (await put({ 'if-match': first ?? '' }, 'two')).headers.get('etag')
      expect(second).not.toBe(first)
      const got = await s3.send({ method: 'GET', key })
      expect([await got.text(), got.headers.get('etag')]).toEqual(['two', second])
    })

    it('answers HEAD with the size and version, and a missing key as 404 NotFound', async () => {
      const s3 = client()
      const key = `${prefix}/head`
      const etag = (await s3.send({ method: 'PUT', key, body: encode('12345') })).headers.get(
        'etag',
      )
      const head = await s3.send({ method: 'HEAD', key })
      expect([head.headers.get('content-length'), head.headers.get('etag')]).toEqual(['5', etag])
      const missing = await failure(s3.send({ method: 'HEAD', key: `${prefix}/none` }))
      expect([missing.code, missing.status]).toEqual(['NotFound', 404])
      const gone = await failure(s3.send({ method: 'GET', key: `${prefix}/none` }))
      expect([gone.code, gone.status]).toEqual(['NoSuchKey', 404])
    })

    it('reads a range of a large body, and the whole body back unchanged', async () => {
      const s3 = client()
      const key = `${prefix}/large`
      const body = new Uint8Array(6 * 1024 * 1024 + 7)
      for (let i = 0; i < body.length; i++) body[i] = (i * 31 + (i >> 12)) & 0xff
      await s3.send({ method: 'PUT', key, body })
      const whole = new Uint8Array(await (await s3.send({ method: 'GET', key })).arrayBuffer())
      expect(whole.length).toBe(body.length)
      expect(Buffer.from(whole).equals(Buffer.from(body))).toBe(true)
      const range = await s3.send({
        method: 'GET',
        key,
        headers: { range: 'bytes=4194300-4194309' },
      })
      expect(range.status).toBe(206)
      expect([...new Uint8Array(await range.arrayBuffer())]).toEqual([
        ...body.subarray(4194300, 4194310),
      ])
    })

    it('keeps keys that need encoding as they are, through put, get and list', async () => {
      const store = new S3ObjectStore({
        bucket: bucket.bucket,
        prefix: `${prefix}-keys`,
        client: client(),
      })
      const names = ['a b/c+d', 'ü/ñ~é', "q?x=1&y#z!'()*", 'per%cent/semi;colon,comma']
      for (const name of names) await store.put(name, encode(name), { ifNoneMatch: '*' })
      for (const name of names) {
        expect(new TextDecoder().decode((await store.get(name))?.body)).toBe(name)
      }
      const listed = (await store.list('')).objects.map((o) => o.key)
      expect(listed.sort()).toEqual([...names].sort())
      for (const name of names) await store.delete(name)
    })
  })
}

describe('S3Rest credentials and retries', () => {
  it('asks its credential source before each request and signs the session token', async () => {
    const sent: Record<string, string>[] = []
    const watching: typeof fetch = (input, init) => {
      sent.push({ ...(init?.headers as Record<string, string>) })
      return fetch(input, init)
    }
    let asked = 0
    const source = async () => {
      asked += 1
      return { ...keys, sessionToken: `token-${asked}` }
    }
    const s3 = rest({ credentials: source, fetch: watching })
    await s3.send({ method: 'PUT', key: 'creds/k', body: encode('v') })
    await (await s3.send({ method: 'GET', key: 'creds/k' })).arrayBuffer()
    expect(asked).toBe(2)
    expect(sent.map((h) => h['x-amz-security-token'])).toEqual(['token-1', 'token-2'])
    expect(sent[0]?.authorization).toContain('x-amz-date;x-amz-security-token,')
  })

  it('fails without credentials, named as the SDK named it (not retried)', async () => {
    const store = new S3ObjectStore({
      bucket: bucket.bucket,
      client: new S3Rest({
        bucket: bucket.bucket,
        region: 'us-east-1',
        endpoint: services.s3.endpoint,
        forcePathStyle: true,
      }),
    })
    await expect(store.get('k')).rejects.toMatchObject({
      code: 'storage_unavailable',
      retryable: false,
      message: expect.stringContaining('CredentialsProviderError'),
    })
  })

  it('retries throttling and 5xx three times in all, as the SDK did, and not a 412', async () => {
    const answers: number[] = []
    let failures = 0
    const server = createServer((request, response) => {
      if (failures > 0) {
        failures -= 1
        answers.push(503)
        response.writeHead(503, { 'content-type': 'application/xml' })
        response.end('<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>')
        return
      }
      answers.push(412)
      request.resume()
      response.writeHead(412, { 'content-type': 'application/xml' })
      response.end('<Error><Code>PreconditionFailed</Code><Message>no</Message></Error>')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const s3 = rest({ endpoint })
      failures = 5
      const throttled = await failure(s3.send({ method: 'GET', key: 'k' }))
      expect([throttled.code, answers]).toEqual(['SlowDown', [503, 503, 503]])
      answers.length = 0
      failures = 1
      const lost = await failure(s3.send({ method: 'PUT', key: 'k', body: encode('v') }))
      expect([lost.code, answers]).toEqual(['PreconditionFailed', [503, 412]])
      answers.length = 0
      const once = await failure(s3.send({ method: 'PUT', key: 'k', body: encode('v') }))
      expect([once.status, answers]).toEqual([412, [412]])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

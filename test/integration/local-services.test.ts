import { connect } from 'node:net'
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireServices } from '../support/services.ts'

/** The local services that every storage test relies on, checked for what the protocol needs. */
const services = requireServices()

async function putStatus(client: S3Client, command: PutObjectCommand): Promise<number> {
  try {
    const out = await client.send(command)
    return out.$metadata.httpStatusCode ?? 0
  } catch (error) {
    if (error instanceof S3ServiceException) return error.$metadata.httpStatusCode ?? 0
    throw error
  }
}

describe('moto_server', () => {
  const s3 = new S3Client({
    endpoint: services.s3.endpoint,
    region: services.s3.region,
    forcePathStyle: true,
    credentials: {
      accessKeyId: services.s3.accessKeyId,
      secretAccessKey: services.s3.secretAccessKey,
    },
  })
  const Bucket = `local-services-${process.pid}-${Date.now()}`
  const put = (Key: string, Body: string, extra: Partial<PutObjectCommand['input']> = {}) =>
    new PutObjectCommand({ Bucket, Key, Body, ...extra })

  beforeAll(async () => {
    await s3.send(new CreateBucketCommand({ Bucket }))
  })
  afterAll(async () => {
    for (const Key of ['a', 'race']) await s3.send(new DeleteObjectCommand({ Bucket, Key }))
    await s3.send(new DeleteBucketCommand({ Bucket }))
    s3.destroy()
  })

  it('rejects a create-only PUT of an existing key and a PUT with a stale ETag (412)', async () => {
    const first = await s3.send(put('a', 'one', { IfNoneMatch: '*' }))
    expect(await putStatus(s3, put('a', 'two', { IfNoneMatch: '*' }))).toBe(412)
    expect(await putStatus(s3, put('a', 'three', { IfMatch: first.ETag }))).toBe(200)
    expect(await putStatus(s3, put('a', 'four', { IfMatch: first.ETag }))).toBe(412)
  })

  it('keeps a connection: two requests sent at once on one socket are both answered', async () => {
    // A PUT with a body and a GET in one write: the GET must not be read as the PUT's leftovers.
    const endpoint = new URL(services.s3.endpoint)
    const head = (line: string, extra: string) =>
      `${line} HTTP/1.1\r\nHost: ${endpoint.host}\r\n` +
      'Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, ' +
      `SignedHeaders=host, Signature=0\r\n${extra}\r\n`
    const socket = connect(Number(endpoint.port), endpoint.hostname)
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    const closed = new Promise((resolve) => socket.once('close', resolve))
    socket.write(
      `${head(`PUT /${Bucket}/kept`, 'Content-Length: 5\r\n')}hello` +
        head(`GET /${Bucket}/kept`, 'Connection: close\r\n'),
    )
    await closed
    const answers = Buffer.concat(chunks).toString('latin1')
    expect(answers.match(/^HTTP\/1\.1 200 /gm)).toHaveLength(2)
    expect(answers.split('\r\n\r\n').at(-1)).toBe('hello')
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'kept' }))
  })

  it('lets exactly one of 20 racing create-only PUTs win', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        putStatus(s3, put('race', `r${i}`, { IfNoneMatch: '*' })),
      ),
    )
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 412 || s === 409)).toHaveLength(19)
  })
})

describe('redis-server', () => {
  const redis = new Redis(services.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  afterAll(() => redis.disconnect())

  it('answers PING and honours SET NX PX', async () => {
    await redis.connect()
    expect(await redis.ping()).toBe('PONG')
    const key = `local-services:${process.pid}:${Date.now()}`
    expect(await redis.set(key, 'a', 'PX', 5000, 'NX')).toBe('OK')
    expect(await redis.set(key, 'b', 'PX', 5000, 'NX')).toBeNull()
    expect(await redis.del(key)).toBe(1)
  })
})

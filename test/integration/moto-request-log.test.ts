import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Rest } from '../../adapters/s3/s3-rest.ts'
import {
  type LocalServices,
  startServices,
  stopServices,
  tmpDir,
} from '../../infra/local/services.mjs'
import { motoRequestLog } from '../support/moto-request-log.ts'

/**
 * moto_server started with a request log (infra/local/moto-server-lean.py), as
 * `npm run services:start` starts it for the benches that count a turn's S3 requests: each
 * request noted once, with its method, its body's size and an interval on the clock of
 * process.hrtime.bigint() that lies within the client's own.
 */
const stateFile = join(tmpDir, `test-services-${process.pid}.json`)
const requestLog = join(tmpDir, `test-services-${process.pid}-moto-requests.log`)
let services: LocalServices
const hrMs = () => Number(process.hrtime.bigint()) / 1e6

const client = (accessKeyId: string, bucket: string) =>
  new S3Rest({
    bucket,
    region: services.s3.region,
    endpoint: services.s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey: services.s3.secretAccessKey },
  })

describe('moto_server with a request log', () => {
  beforeAll(async () => {
    services = await startServices({ stateFile, owner: process.pid, requestLog })
  }, 60_000)
  afterAll(async () => {
    await stopServices(stateFile)
  })

  it('notes each request of one access key id, with its method, body size and interval', async () => {
    const bucket = `moto-log-${process.pid}-${Date.now()}`
    const counted = client('countedkey', bucket)
    const other = client(services.s3.accessKeyId, bucket)
    const log = motoRequestLog(requestLog, 'countedkey')
    const body = new TextEncoder().encode('x'.repeat(1234))
    const sent: { method: string; bytes: number; from: number; to: number }[] = []
    const timed = async (method: string, bytes: number, request: () => Promise<unknown>) => {
      const from = hrMs()
      await request()
      sent.push({ method, bytes, from, to: hrMs() })
    }
    await timed('PUT', 0, () => counted.createBucket())
    await timed('PUT', 1234, async () => {
      const answer = await counted.send({ method: 'PUT', key: 'a/one', body })
      expect(answer.status).toBe(200)
    })
    await timed('GET', 0, async () => {
      const answer = await counted.send({ method: 'GET', key: 'a/one' })
      expect((await answer.arrayBuffer()).byteLength).toBe(1234)
    })
    // Another key's requests are not this client's.
    expect((await other.send({ method: 'HEAD', key: 'a/one' })).status).toBe(200)
    await timed('DELETE', 0, () => counted.send({ method: 'DELETE', key: 'a/one' }))
    const noted = await log.take()
    expect(noted.map((r) => [r.method, r.bytes])).toEqual(sent.map((r) => [r.method, r.bytes]))
    for (const [i, request] of noted.entries()) {
      const client = sent[i] ?? { from: Number.NaN, to: Number.NaN }
      // One clock: moto's interval lies within the client's, and ends after it starts.
      expect(request.from).toBeGreaterThanOrEqual(client.from)
      expect(request.to).toBeLessThanOrEqual(client.to)
      expect(request.to).toBeGreaterThan(request.from)
    }
    // Two requests at once: both noted, and their intervals are not in the other's past.
    const started = hrMs()
    await Promise.all(
      ['b', 'c'].map((key) => counted.send({ method: 'PUT', key, body: body.subarray(0, 10) })),
    )
    const ended = hrMs()
    const both = await log.take()
    expect(both.map((r) => [r.method, r.bytes])).toEqual([
      ['PUT', 10],
      ['PUT', 10],
    ])
    for (const r of both) {
      expect(r.from).toBeGreaterThanOrEqual(started)
      expect(r.to).toBeLessThanOrEqual(ended)
    }
    expect(await log.take()).toEqual([])
    log.close()
    for (const key of ['b', 'c']) await other.send({ method: 'DELETE', key })
    await other.send({ method: 'DELETE' })
  }, 30_000)
})

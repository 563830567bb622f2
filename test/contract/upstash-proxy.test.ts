/**
 * The Upstash REST proxy that the Redis-backed tests stand on: protocol details checked on the
 * wire (raw fetch) and through `@upstash/redis` itself.
 */
import { Redis } from '@upstash/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireServices } from '../support/services.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

let proxy: UpstashProxy
const prefix = `turnline-proxy-test:${crypto.randomUUID().slice(0, 8)}:`
const k = (name: string) => `${prefix}${name}`
const b64 = (text: string) => Buffer.from(text).toString('base64')

beforeAll(async () => {
  proxy = await startUpstashProxy({ redisUrl: requireServices().redisUrl })
})

afterAll(async () => {
  if (proxy === undefined) return
  const redis = new Redis({ url: proxy.url, token: proxy.token, enableTelemetry: false })
  const keys = await redis.keys(`${prefix}*`)
  if (keys.length > 0) await redis.del(...keys)
  await proxy.close()
})

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.token}`, ...headers },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: await response.json() }
}

describe('Upstash REST proxy', () => {
  it('answers 401 {"error":"Unauthorized"} to a wrong or missing token', async () => {
    for (const authorization of ['Bearer wrong', '']) {
      const response = await fetch(`${proxy.url}/`, {
        method: 'POST',
        headers: authorization ? { authorization } : {},
        body: JSON.stringify(['PING']),
      })
      expect(response.status).toBe(401)
      expect(await response.json()).toEqual({ error: 'Unauthorized' })
    }
  })

  it('runs one command at POST / with plain results', async () => {
    expect(await post('/', ['SET', k('a'), 'héllo'])).toEqual({
      status: 200,
      json: { result: 'OK' },
    })
    expect(await post('/', ['GET', k('a')])).toEqual({ status: 200, json: { result: 'héllo' } })
    expect(await post('/', ['GET', k('missing')])).toEqual({ status: 200, json: { result: null } })
    expect(await post('/', ['INCRBY', k('n'), 5])).toEqual({ status: 200, json: { result: 5 } })
  })

  it('base64-encodes every string with Upstash-Encoding: base64, numbers and nil plain', async () => {
    const enc = { 'Upstash-Encoding': 'base64' }
    await post('/', ['RPUSH', k('l'), 'x', '日本'])
    expect(await post('/', ['GET', k('a')], enc)).toEqual({
      status: 200,
      json: { result: b64('héllo') },
    })
    expect(await post('/', ['LRANGE', k('l'), 0, -1], enc)).toEqual({
      status: 200,
      json: { result: [b64('x'), b64('日本')] },
    })
    const script = "return {ARGV[1], 7, false, {ARGV[1], 'y'}}"
    expect(await post('/', ['EVAL', script, 0, 'z'], enc)).toEqual({
      status: 200,
      json: { result: [b64('z'), 7, null, [b64('z'), b64('y')]] },
    })
  })

  it('flattens HGETALL to a field/value array', async () => {
    await post('/', ['HSET', k('h'), 'f1', 'v1', 'f2', 2])
    expect(await post('/', ['HGETALL', k('h')])).toEqual({
      status: 200,
      json: { result: ['f1', 'v1', 'f2', '2'] },
    })
  })

  it('answers command errors with 400 {"error"}', async () => {
    const { status, json } = await post('/', ['INCR', k('a')])
    expect(status).toBe(400)
    expect(json).toEqual({ error: expect.stringMatching(/not an integer/) })
    expect((await post('/', { not: 'a command' })).status).toBe(400)
    expect((await post('/', [])).status).toBe(400)
  })

  it('runs /pipeline in order with per-command results and errors', async () => {
    const { status, json } = await post('/pipeline', [
      ['SET', k('p'), '1'],
      ['INCR', k('p')],
      ['INCR', k('a')],
      ['GET', k('p')],
    ])
    expect(status).toBe(200)
    expect(json).toEqual([
      { result: 'OK' },
      { result: 2 },
      { error: expect.stringMatching(/not an integer/) },
      { result: '2' },
    ])
  })

  it('runs /multi-exec as a transaction', async () => {
    const { status, json } = await post('/multi-exec', [
      ['SET', k('m'), 'a'],
      ['APPEND', k('m'), 'b'],
      ['GET', k('m')],
    ])
    expect(status).toBe(200)
    expect(json).toEqual([{ result: 'OK' }, { result: 2 }, { result: 'ab' }])
  })

  it('serves @upstash/redis 1.39.0 end to end and counts its requests', async () => {
    const redis = new Redis({ url: proxy.url, token: proxy.token, enableTelemetry: false })
    proxy.resetStats()
    await redis.set(k('obj'), { n: 1, s: 'ü' })
    expect(await redis.get(k('obj'))).toEqual({ n: 1, s: 'ü' })
    await redis.hset(k('h2'), { a: 1, b: 'x' })
    expect(await redis.hgetall(k('h2'))).toEqual({ a: 1, b: 'x' })
    const tx = redis.multi()
    tx.incr(k('c'))
    tx.incr(k('c'))
    expect(await tx.exec()).toEqual([1, 2])
    const [one, two] = await Promise.all([redis.incr(k('d')), redis.incr(k('d'))])
    expect([one, two]).toEqual([1, 2])
    expect(proxy.requestCount).toBe(6)
    expect(proxy.requests.at(-1)).toMatchObject({ path: '/pipeline', commands: ['incr', 'incr'] })
  })
})

describe('Upstash REST proxy, observed', () => {
  it('tells `observe` of each request once its answer is written, with its body size', async () => {
    const served: { from: number; to: number; bytes: number }[] = []
    const observed = await startUpstashProxy({
      redisUrl: requireServices().redisUrl,
      observe: (request) => served.push(request),
      holdMs: 5,
    })
    try {
      const body = JSON.stringify([['PING'], ['ECHO', 'x']])
      const response = await fetch(`${observed.url}/pipeline`, {
        method: 'POST',
        headers: { authorization: `Bearer ${observed.token}` },
        body,
      })
      expect(await response.json()).toEqual([{ result: 'PONG' }, { result: 'x' }])
      expect(served).toHaveLength(1)
      expect(served[0]?.bytes).toBe(Buffer.byteLength(body))
      expect(served[0]?.to).toBeGreaterThan(served[0]?.from ?? Number.POSITIVE_INFINITY)
    } finally {
      await observed.close()
    }
  })
})

import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { requireServices } from '../support/services.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * `DELETE /v1/sessions/:id` over HTTP on S3 (moto) and Upstash (redis-server): the session's
 * objects leave the bucket, its keys leave Redis, and every route answers 404 after; another
 * tenant's key gets 404 and deletes nothing.
 */
const KEYS = 'delete-key-tenant-one-0001=one,delete-key-tenant-two-0002=two'
let deployment: TestDeployment
let mock: MockOpenAI
let redis: IORedis

beforeAll(async () => {
  deployment = await startTestDeployment('delete', {
    TURNLINE_API_KEYS: KEYS,
    TURNLINE_LOG: 'off',
    TURNLINE_CALLBACK_ALLOW_HTTP: '1',
  })
  mock = deployment.mock
  redis = new IORedis(requireServices().redisUrl)
}, 60_000)
afterAll(async () => {
  redis?.disconnect()
  await deployment?.close()
})

const call = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${deployment.app.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
const ONE = 'delete-key-tenant-one-0001'
const TWO = 'delete-key-tenant-two-0002'

describe('DELETE /v1/sessions/{id}', { timeout: 60_000 }, () => {
  it('erases the session from S3 and Redis; every route answers 404 after', async () => {
    // Its completion callbacks go nowhere (a closed port): their outbox entries stay pending.
    const created = await call(ONE, 'POST', '/v1/sessions', {
      workspace: 'gdpr',
      callback: { url: 'http://127.0.0.1:9/notices' },
    })
    const { session_id: id } = (await created.json()) as { session_id: string }
    mock.enqueue({ text: 'Personal data, briefly.' })
    const turn = await fetch(`${deployment.app.url}/v1/sessions/${id}/turns`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ONE}`,
        'content-type': 'application/json',
        'idempotency-key': 'turn-one',
      },
      body: JSON.stringify({ input: 'hi' }),
    })
    expect(turn.status).toBe(200)
    expect((await call(ONE, 'POST', `/v1/sessions/${id}/intents`, { text: 'later' })).status).toBe(
      202,
    )
    const store = deployment.bucket.store()
    // Background work of the session as the queue keeps it: queued, run (a loop step's
    // marker), and retired as failed.
    const work = '0123456789abcdef0123456789abcdef'
    for (const state of ['pending', 'done', 'failed']) {
      await store.put(
        `.turnline/work/${state}/one/${id}/${work}.json`,
        new TextEncoder().encode('{}'),
      )
    }
    const objects = async () =>
      (await listAll(store, '')).objects.map(({ key }) => key).filter((key) => key.includes(id))
    const redisKeys = async () => (await redis.keys(`*${id}*`)).sort()
    const before = await objects()
    expect(before.filter((key) => key.startsWith('.turnline/work/'))).toHaveLength(3)
    expect(before.filter((key) => key.startsWith('.turnline/callbacks/')).length).toBeGreaterThan(0)
    expect(before.filter((key) => key.includes(`${id}/callbacks/`)).length).toBeGreaterThan(0)
    // The tip, the pending intent, and the turn's first answer under its Idempotency-Key.
    expect((await redisKeys()).filter((key) => key.endsWith(`${id}/turn-one`))).toHaveLength(1)

    // Another tenant: 404, nothing deleted.
    expect((await call(TWO, 'DELETE', `/v1/sessions/${id}`)).status).toBe(404)
    expect((await call(ONE, 'GET', `/v1/sessions/${id}`)).status).toBe(200)

    const deleted = await call(ONE, 'DELETE', `/v1/sessions/${id}`)
    expect(deleted.status).toBe(204)
    // Left in the bucket: the deleted-session marker alone, which fences the log.
    const kept = await objects()
    expect(kept).toEqual([expect.stringMatching(/\/log\/\d{10}\.json$/)])
    expect(
      JSON.parse(new TextDecoder().decode((await store.get(kept[0] as string))?.body)),
    ).toEqual({
      format: 'turnline.deleted',
      version: 1,
      deleted_at: expect.any(String),
    })
    // Left: the tenant's usage accounting of the turn's model call (ids, no content), which
    // expires by itself (two days) and keeps a resent settlement from counting twice.
    const left = await redisKeys()
    expect(left.filter((key) => !key.includes(':settled:'))).toEqual([])
    for (const key of left) expect(await redis.pttl(key)).toBeGreaterThan(0)
    for (const [method, path] of [
      ['GET', `/v1/sessions/${id}`],
      ['GET', `/v1/sessions/${id}/events`],
      ['POST', `/v1/sessions/${id}/turns`],
      ['DELETE', `/v1/sessions/${id}`],
    ] as const) {
      const answer = await call(ONE, method, path, method === 'POST' ? { input: 'x' } : undefined)
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 })
    }
    const listed = (await (await call(ONE, 'GET', '/v1/sessions?workspace=gdpr')).json()) as {
      sessions: unknown[]
    }
    expect(listed.sessions).toEqual([])
  })
})

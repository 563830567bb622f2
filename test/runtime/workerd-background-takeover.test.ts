import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { deploymentEnv } from '../support/app-instance.ts'
import { gate } from '../support/gate.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startWorkerd } from '../support/runtimes.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * A Worker killed (SIGKILL to workerd and wrangler) in the middle of a background turn: its
 * queue message dies with it (wrangler dev's broker lives in that workerd), the turn is open and
 * its session leased. A second workerd on the same bucket and Upstash finds the record at its
 * cron trigger's sweep and, once the dead lease lapsed, continues the same turn from its last
 * commit: one turn, answered by the second model call, never the first's.
 */
let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined
let proxy: UpstashProxy | undefined
let mock: MockOpenAI
let env: Record<string, string> = {}
let worker: RuntimeProcess | undefined

beforeAll(async () => {
  const services = requireServices()
  bucket = await createTestBucket(services.s3, 'wtk')
  proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
  mock = await startMockOpenAI()
  env = deploymentEnv({
    s3: services.s3,
    bucket: bucket.bucket,
    upstash: proxy,
    modelBaseURL: mock.baseURL,
    extra: { TURNLINE_SINGLE_TENANT: '1', TURNLINE_LEASE_MS: '4000' },
  })
})

afterAll(async () => {
  await worker?.stop()
  await mock?.close()
  await proxy?.close()
  await bucket?.destroy()
})

const { call, workState } = jsonCalls(() => {
  if (!worker) throw new Error('workerd is not running')
  return worker.url
})

describe('background work on Workers after a crash', () => {
  it('is taken over by another workerd at its cron sweep, once', { timeout: 240_000 }, async () => {
    worker = await startWorkerd(env, ['--test-scheduled'])
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    const never = gate()
    mock.enqueue({ text: 'never sent', hold: never.promise }, { text: 'taken over' })
    const accepted = await call(
      'POST',
      `/v1/sessions/${session}/turns`,
      { input: 'go' },
      { prefer: 'respond-async', 'idempotency-key': 'wtk-1' },
    )
    expect(accepted.status, accepted.text).toBe(202)
    const location = accepted.headers.get('location') ?? ''
    await workState(location, 'running')
    await vi.waitUntil(() => mock.requests.length === 1, { timeout: 60_000, interval: 50 })

    await worker.crash()
    never.open()
    worker = await startWorkerd(env, ['--test-scheduled'])
    // Each tick sends the record again; until the dead lease lapsed its delivery is put back.
    let ticked = 0
    const done = await vi.waitUntil(
      async () => {
        if (Date.now() - ticked > 2000) {
          ticked = Date.now()
          await call('GET', '/__scheduled?cron=*+*+*+*+*')
        }
        const work = (await call('GET', location)).json()
        return work.state === 'done' ? work : undefined
      },
      { timeout: 120_000, interval: 100 },
    )
    expect(done.turn).toMatchObject({ status: 'completed' })
    expect(mock.requests).toHaveLength(2)
    const events = (await call('GET', `/v1/sessions/${session}/events?after=-1`)).text
    expect(events.match(/"turn\.started"/g)).toHaveLength(1)
    expect(events).toContain('taken over')
    expect(events).not.toContain('never sent')
    if (!bucket) throw new Error('no bucket')
    expect((await listAll(bucket.store(), '.turnline/work/pending/')).objects).toEqual([])
  })
})

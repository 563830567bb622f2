import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimedDeps } from '../../functions/entries/entry-app.ts'
import { nodeBackends } from '../../functions/entries/node-backends.ts'
import { ConfigError } from '../../functions/env-config.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import { type AppInstance, startAppInstance } from '../support/app-instance.ts'
import { requireServices } from '../support/services.ts'
import { signMessage } from '../support/signed-callback.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * Two deployments — prod and staging: one bucket with another S3_PREFIX each, the same tenant,
 * keys and webhook — on one Redis database, through Upstash (the REST proxy) and over TCP
 * (REDIS_URL). With their own TURNLINE_REDIS_NAMESPACE neither sees the other's request quota,
 * webhook runs, idempotency records, leases or intents; without one, the second to start
 * refuses. A deployment without the setting keeps the keys every earlier release wrote.
 */
const API_KEY = 'api-key-two-deployments-0123456789'
const SECRET = `whsec_${Buffer.from('two-deployments-webhook-secret').toString('base64')}`
const PER_MINUTE = 3
const run = crypto.randomUUID().slice(0, 8)

const transports = [
  ['Upstash (REST proxy)', 'upstash'],
  ['plain Redis (REDIS_URL)', 'tcp'],
] as const

let backends: TestBackends
let redis: Redis
const started: AppInstance[] = []

beforeAll(async () => {
  backends = await startTestBackends('two-deployments')
  backends.mock.respond(() => ({ text: 'Handled.' }))
  redis = new Redis(requireServices().redisUrl)
})
afterAll(async () => {
  for (const app of started) await app.close()
  redis?.disconnect()
  await backends?.close()
})

function envOf(transport: 'upstash' | 'tcp', prefix: string, namespace: string | undefined) {
  const env = backends.env({
    S3_PREFIX: prefix,
    TURNLINE_API_KEYS: `${API_KEY}=acme`,
    TURNLINE_LIMIT_REQUESTS_PER_MINUTE: String(PER_MINUTE),
    TURNLINE_WEBHOOKS: JSON.stringify({
      triage: { secret: SECRET, tenant: 'acme' },
    }),
  })
  if (namespace === undefined) delete env.TURNLINE_REDIS_NAMESPACE
  else env.TURNLINE_REDIS_NAMESPACE = namespace
  if (transport === 'tcp') {
    delete env.UPSTASH_REDIS_REST_URL
    delete env.UPSTASH_REDIS_REST_TOKEN
    env.REDIS_URL = requireServices().redisUrl
  }
  return env
}

/** A deployment's instance as an entry starts it: deps built, its Redis namespace claimed. */
async function deployment(env: Record<string, string>): Promise<AppInstance> {
  const app = await startAppInstance(env, nodeBackends)
  started.push(app)
  await claimedDeps(app.deps)
  return app
}

async function deliver(app: AppInstance, webhookId: string) {
  const { body, headers } = signMessage(SECRET, '{"event":"push"}', webhookId)
  const res = await fetch(`${app.url}/v1/webhooks/triage`, { method: 'POST', headers, body })
  return { status: res.status, body: await res.text() }
}

const listSessions = (app: AppInstance) =>
  fetch(`${app.url}/v1/sessions`, { headers: { authorization: `Bearer ${API_KEY}` } })

const coordinatorOf = (app: AppInstance): Coordinator => app.deps.service.coordinator

describe.each(transports)('two deployments on one database, %s', (_, transport) => {
  let prod: AppInstance
  let staging: AppInstance

  beforeAll(async () => {
    prod = await deployment(envOf(transport, `prod-${transport}`, `prod-${transport}-${run}`))
    staging = await deployment(
      envOf(transport, `staging-${transport}`, `staging-${transport}-${run}`),
    )
  })

  it("staging's requests never use up prod's quota", async () => {
    // A sliding window: across a minute's boundary a few more may pass before the first 429.
    const statuses: number[] = []
    while (statuses.at(-1) !== 429 && statuses.length < 3 * PER_MINUTE + 2) {
      statuses.push((await listSessions(staging)).status)
    }
    expect(statuses.at(-1)).toBe(429)
    expect((await listSessions(prod)).status).toBe(200)
  })

  it('the same webhook delivery runs once in each, each in its own store', async () => {
    const id = `msg_${run}_${transport}`
    const first = await deliver(staging, id)
    expect(first.status, first.body).toBe(200)
    const second = await deliver(prod, id)
    expect(second.status, second.body).toBe(200)
    expect(JSON.parse(second.body)).toMatchObject({
      duplicate: false,
      session_id: JSON.parse(first.body).session_id,
      turn: { status: 'terminal' },
    })
    const again = await deliver(prod, id)
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: true })
  })

  it('leases, idempotency records and intents of the same session ids stay apart', async () => {
    const sessionId = `acme/session-${run}-${transport}`
    const begin = (app: AppInstance, idempotencyKey?: string) =>
      coordinatorOf(app).beginTurn({
        tenant: 'acme',
        sessionId,
        leaseMs: 30_000,
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      })
    const held = await begin(staging)
    if (held.status !== 'acquired') throw new Error(`staging got ${held.status}`)
    await coordinatorOf(staging).enqueueIntent(sessionId, { id: 'i-1', text: 'steer staging' })
    const prodTurn = await begin(prod, 'key-1')
    expect(prodTurn).toMatchObject({ status: 'acquired', intents: [] })
    expect(await begin(staging)).toMatchObject({ status: 'busy' })
    await coordinatorOf(staging).endTurn({
      lease: held.lease,
      tenant: 'acme',
      tip: 4,
      idempotency: {
        key: 'key-1',
        record: { sessionId, turnId: 'turn-1', batch: 4, response: '{}' },
      },
    })
    expect(await coordinatorOf(prod).getTip(sessionId)).toBeNull()
    expect(await begin(staging, 'key-1')).toMatchObject({ status: 'replay' })
    if (prodTurn.status !== 'acquired') throw new Error('unreachable')
    await coordinatorOf(prod).releaseLease(prodTurn.lease)
    expect(await begin(prod, 'key-1')).toMatchObject({ status: 'acquired' })
  })

  it('a deployment that takes another one’s namespace refuses to start; its own instances do not', async () => {
    const shared = `shared-${transport}-${run}`
    await deployment(envOf(transport, `first-${transport}`, shared))
    // Another instance of the same deployment (same prefix) shares its keys.
    await deployment(envOf(transport, `first-${transport}`, shared))
    const other = await startAppInstance(
      envOf(transport, `second-${transport}`, shared),
      nodeBackends,
    )
    started.push(other)
    const refusal = await claimedDeps(other.deps).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refusal).toBeInstanceOf(ConfigError)
    expect((refusal as Error).message).toMatch(
      new RegExp(
        `TURNLINE_REDIS_NAMESPACE: the Redis keys under turnline:ns:${shared}: belong to deployment dep_[0-9a-f]{32} \\(sessions in s3://[^/]+/first-${transport}`,
      ),
    )
  })
})

describe('a deployment without TURNLINE_REDIS_NAMESPACE', () => {
  it.each(transports)(
    'keeps the keys of earlier releases (%s): an upgrade loses nothing',
    async (_, transport) => {
      const app = await startAppInstance(
        envOf(transport, `legacy-${transport}`, undefined),
        nodeBackends,
      )
      started.push(app)
      const sessionId = `acme/legacy-${run}-${transport}`
      // Written by the release before namespaces: a pending intent and a live lease.
      await redis.rpush(`turnline:intents:${sessionId}`, `1\nold-intent\nstill pending`)
      await redis.set(`turnline:lease:${sessionId}`, 'old-token', 'PX', 30_000)
      expect(await coordinatorOf(app).pendingIntents(sessionId)).toEqual([
        { id: 'old-intent', text: 'still pending' },
      ])
      expect(
        await coordinatorOf(app).beginTurn({ tenant: 'acme', sessionId, leaseMs: 30_000 }),
      ).toMatchObject({ status: 'busy' })
      await redis.del(`turnline:intents:${sessionId}`, `turnline:lease:${sessionId}`)
    },
  )
})

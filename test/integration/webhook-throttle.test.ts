import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryFailureThrottle } from '../../adapters/memory/memory-failure-throttle.ts'
import { createApp } from '../../functions/app.ts'
import { WebhookConfigSchema } from '../../src/contract/webhook-config.ts'
import { startEngine } from '../support/engine-harness.ts'
import { signMessage } from '../support/signed-callback.ts'

/**
 * Failed webhook signatures are throttled as failed authentications are: per client address
 * (refused before the body is read, a valid delivery included, as with keys) and per webhook
 * (its failures turn into 429s, while valid deliveries still run). Here on the in-process
 * throttle with a manual clock, and a test header standing for the runtime's peer address.
 */
const SECRET = `whsec_${Buffer.from('throttled-webhook-secret-0123456789').toString('base64')}`
const GUESS = `whsec_${Buffer.from('a-guess-at-the-secret-000').toString('base64')}`
const PER_MINUTE = 3

class ManualClock {
  time = Date.UTC(2026, 0, 1, 12)
  now = () => this.time
}

let engine: Awaited<ReturnType<typeof startEngine>>
const clock = new ManualClock()
const lines: Record<string, unknown>[] = []
let app: ReturnType<typeof createApp>

beforeAll(async () => {
  engine = await startEngine()
  const throttle = new MemoryFailureThrottle({ clock })
  app = createApp({
    api: engine.service,
    auth: { keys: [] },
    webhooks: {
      triage: WebhookConfigSchema.parse({
        secret: SECRET,
        tenant: 'local',
      }),
    },
    authFailures: {
      throttle,
      fallback: throttle,
      perMinute: PER_MINUTE,
      trustedProxies: [],
      clock,
    },
    peerAddress: (request) => request.headers.get('x-test-peer') ?? undefined,
    requestLog: (entry) => lines.push(entry),
    log: () => {},
  })
})
afterAll(() => engine?.close())

function deliver(from: string, options: { valid: boolean }) {
  const signed = signMessage(options.valid ? SECRET : GUESS, '{"event":"push"}')
  return app.request('/v1/webhooks/triage', {
    method: 'POST',
    headers: { ...signed.headers, 'x-test-peer': from },
    body: signed.body,
  })
}

describe('failed webhook signatures', () => {
  it('turn into 429 with Retry-After for their address, and never hold up valid deliveries from others', async () => {
    engine.mock.respond(() => ({ text: 'Handled.' }))
    const statuses: number[] = []
    for (let i = 0; i < PER_MINUTE + 2; i++) {
      statuses.push((await deliver('203.0.113.7', { valid: false })).status)
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429])
    const refused = await deliver('203.0.113.7', { valid: true })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.json()).toMatchObject({
      error: { code: 'rate_limited', details: { reason: 'webhook_signature_failures' } },
    })
    expect(engine.mock.requests).toHaveLength(0)
    expect((await deliver('198.51.100.2', { valid: true })).status).toBe(200)
    expect(engine.mock.requests).toHaveLength(1)
    const burst = lines.filter((line) => line.msg === 'auth_throttled')
    expect(burst).toEqual([
      expect.objectContaining({
        scope: 'webhook_address',
        client: '203.0.113.7',
        webhook: 'triage',
      }),
    ])

    clock.time += 60_000
    expect((await deliver('203.0.113.7', { valid: true })).status).toBe(200)
  })

  it('past the webhook’s own limit, failures from any address are 429 while valid deliveries run', async () => {
    clock.time += 10 * 60_000
    engine.mock.reset()
    engine.mock.respond(() => ({ text: 'Handled.' }))
    const statuses: number[] = []
    // Two failures from each address: none reaches its address's limit.
    for (let i = 0; i < PER_MINUTE * 5 + 2; i++) {
      statuses.push((await deliver(`192.0.2.${Math.floor(i / 2)}`, { valid: false })).status)
    }
    expect(statuses.slice(0, PER_MINUTE * 5)).toEqual(Array(PER_MINUTE * 5).fill(401))
    expect(statuses.slice(PER_MINUTE * 5)).toEqual([429, 429])
    expect((await deliver('192.0.2.200', { valid: true })).status).toBe(200)
    expect(engine.mock.requests).toHaveLength(1)
  })
})

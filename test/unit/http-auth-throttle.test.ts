import { describe, expect, it } from 'vitest'
import { MemoryFailureThrottle } from '../../adapters/memory/memory-failure-throttle.ts'
import { createApp } from '../../functions/app.ts'
import type { AuthFailureLimit } from '../../functions/http/auth-throttle.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { FailureThrottle } from '../../src/ports/failure-throttle.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'

/**
 * Failed authentications are throttled per client address and per presented key prefix, before
 * the key is looked at; successes cost nothing. Here on the in-process throttle with a manual
 * clock, and a test header standing for the runtime's peer address.
 */
const KEY = 'valid-key-0123456789abcdef'
const OTHER_KEY = 'other-prefix-0123456789abcdef'
const PER_MINUTE = 5

class ManualClock {
  time = Date.UTC(2026, 0, 1, 12)
  now = () => this.time
}

function setup(throttle?: FailureThrottle) {
  const clock = new ManualClock()
  const own = new MemoryFailureThrottle({ clock })
  const limit: AuthFailureLimit = {
    throttle: throttle ?? own,
    fallback: own,
    perMinute: PER_MINUTE,
    trustedProxies: [],
    clock,
  }
  const lines: Record<string, unknown>[] = []
  const app = createApp({
    api: new FakeSessionApi(),
    auth: {
      keys: [
        { key: KEY, tenant: 'acme' },
        { key: OTHER_KEY, tenant: 'beta' },
      ],
    },
    authFailures: limit,
    peerAddress: (request) => request.headers.get('x-test-peer') ?? undefined,
    requestLog: (entry) => lines.push(entry),
    log: () => {},
  })
  const call = (from: string, key: string) =>
    app.request('/v1/sessions', {
      headers: { 'x-test-peer': from, authorization: `Bearer ${key}` },
    })
  const throttledLines = () => lines.filter((line) => line.msg === 'auth_throttled')
  return { app, clock, call, throttledLines, lines }
}

describe('failed authentications', () => {
  it('a 401 flood from one address turns into 429 with Retry-After; another address is not held up', async () => {
    const { call, clock } = setup()
    const statuses = []
    for (let i = 0; i < 20; i++) {
      statuses.push((await call('203.0.113.7', `guess-${i}-0123456789abcdef`)).status)
    }
    expect(statuses).toEqual([...Array(PER_MINUTE).fill(401), ...Array(20 - PER_MINUTE).fill(429)])
    const refused = await call('203.0.113.7', 'guess-x-0123456789abcdef')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('12')
    expect(await refused.json()).toMatchObject({
      error: { code: 'rate_limited', details: { reason: 'authentication_failures' } },
    })
    // The throttled address is refused before its key is looked at: a correct key too, or the
    // answer would tell a guesser when it is right.
    expect((await call('203.0.113.7', KEY)).status).toBe(429)
    // Another address: its valid key works, its wrong keys are plain 401s.
    expect((await call('198.51.100.2', KEY)).status).toBe(200)
    expect((await call('198.51.100.2', 'guess-y-0123456789abcdef')).status).toBe(401)
    // One token back after 60/PER_MINUTE s: the correct key passes again.
    clock.time += 12_000
    expect((await call('203.0.113.7', KEY)).status).toBe(200)
  })

  it('a success costs nothing', async () => {
    const { call } = setup()
    for (let i = 0; i < 50; i++) expect((await call('203.0.113.8', KEY)).status).toBe(200)
    const statuses = []
    for (let i = 0; i < PER_MINUTE + 1; i++) {
      statuses.push((await call('203.0.113.8', `guess-${i}-0123456789abcdef`)).status)
    }
    expect(statuses).toEqual([...Array(PER_MINUTE).fill(401), 429])
  })

  it('guesses at one key prefix from many addresses are throttled too', async () => {
    const { call } = setup()
    const statuses = []
    // Same 12 first characters as KEY, each from a new address.
    for (let i = 0; i < 5 * PER_MINUTE + 3; i++) {
      statuses.push((await call(`198.18.0.${i}`, `valid-key-01-guess-${i}`)).status)
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(5 * PER_MINUTE)
    expect(statuses.slice(5 * PER_MINUTE)).toEqual([429, 429, 429])
    // Other keys from fresh addresses are not held up.
    expect((await call('198.18.1.1', OTHER_KEY)).status).toBe(200)
    expect((await call('198.18.1.2', 'different-guess-0123456789')).status).toBe(401)
  })

  it('writes one operator line per burst, none per refused request', async () => {
    const { call, clock, throttledLines } = setup()
    for (let i = 0; i < 40; i++) await call('203.0.113.9', `guess-${i}-0123456789abcdef`)
    expect(throttledLines()).toEqual([
      expect.objectContaining({
        level: 'warn',
        scope: 'address',
        client: '203.0.113.9',
        limit_per_minute: PER_MINUTE,
        retry_after_seconds: 12,
      }),
    ])
    // Still the same burst while tokens come back one at a time and are spent again.
    clock.time += 12_000
    for (let i = 0; i < 3; i++) await call('203.0.113.9', `again-${i}-0123456789abcdef`)
    expect(throttledLines()).toHaveLength(1)
    // Full again after a quiet minute: the next flood is a new burst.
    clock.time += 60_000
    for (let i = 0; i < 10; i++) await call('203.0.113.9', `later-${i}-0123456789abcdef`)
    expect(throttledLines()).toHaveLength(2)
    expect(JSON.stringify(throttledLines())).not.toMatch(/guess|again|later/)
  })

  it('counts in this process while the coordinator cannot be reached (logged once)', async () => {
    const down: FailureThrottle = {
      fail: async () => {
        throw new TurnlineError('coordinator_unavailable', 'the coordinator did not answer')
      },
    }
    const { call, lines } = setup(down)
    const statuses = []
    for (let i = 0; i < PER_MINUTE + 2; i++) {
      statuses.push((await call('203.0.113.10', `guess-${i}-0123456789abcdef`)).status)
    }
    expect(statuses).toEqual([...Array(PER_MINUTE).fill(401), 429, 429])
    expect(lines.filter((line) => line.msg === 'auth_throttle_local')).toHaveLength(1)
  })
})

/**
 * The Coordinator contract, run against every adapter. Each test gets a fresh coordinator whose
 * keys no other test sees. `advance(ms)` lets time pass: a manual clock in memory, real waiting
 * against Redis (so expiry tests use short leases).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type {
  BeginTurnResult,
  Coordinator,
  IdempotencyRecord,
  Lease,
} from '../../src/ports/coordinator.ts'
import { describeCoordinatorActivity } from './coordinator-activity.suite.ts'
import { describeCoordinatorClaims, EXPIRE_WAIT_MS, SHORT_MS } from './coordinator-claims.suite.ts'
import { describeCoordinatorIntents } from './coordinator-intents.suite.ts'
import { describeCoordinatorPlaces } from './coordinator-places.suite.ts'

export interface CoordinatorFixture {
  coordinator: Coordinator
  advance: (ms: number) => Promise<void>
  cleanup: () => Promise<void>
}

export type MakeCoordinator = () => Promise<CoordinatorFixture>

/** Long enough that nothing expires by accident during a test. */
const LEASE_MS = 30_000

const base = { tenant: 'tenant-a', leaseMs: LEASE_MS }

export function acquired(result: BeginTurnResult): Lease {
  if (result.status !== 'acquired') throw new Error(`expected acquired, got ${result.status}`)
  return result.lease
}

/** The error code a promise rejects with, or 'ok'. */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    if (isTurnlineError(error)) return error.code
    throw error
  }
}

function record(turnId: string, batch: number): IdempotencyRecord {
  return {
    sessionId: 's-idem',
    turnId,
    batch,
    response: JSON.stringify({ turn_id: turnId, status: 'completed', note: 'ü "q" \n' }),
  }
}

export function describeCoordinator(name: string, make: MakeCoordinator): void {
  describe(`Coordinator contract: ${name}`, () => {
    let fixture: CoordinatorFixture | undefined
    const f = (): CoordinatorFixture => {
      if (fixture === undefined) throw new Error('fixture not ready')
      return fixture
    }
    const c = (): Coordinator => f().coordinator

    beforeEach(async () => {
      fixture = await make()
    })
    afterEach(async () => {
      await fixture?.cleanup()
      fixture = undefined
    })

    describe('lease', () => {
      it('acquires a free session and reports a null tip', async () => {
        const result = await c().beginTurn({ ...base, sessionId: 's1' })
        const lease = acquired(result)
        expect(lease.sessionId).toBe('s1')
        expect(lease.token.length).toBeGreaterThanOrEqual(16)
        expect(result).toMatchObject({ tip: null })
      })

      it('of 10 concurrent beginTurn exactly one acquires, nine are busy', async () => {
        const results = await Promise.all(
          Array.from({ length: 10 }, () => c().beginTurn({ ...base, sessionId: 's-race' })),
        )
        expect(results.filter((r) => r.status === 'acquired')).toHaveLength(1)
        const busy = results.filter((r) => r.status === 'busy')
        expect(busy).toHaveLength(9)
        for (const r of busy) {
          expect(r.retryAfterMs).toBeGreaterThan(0)
          expect(r.retryAfterMs).toBeLessThanOrEqual(LEASE_MS)
        }
      })

      it('readLease shows a held lease with its time left and acquisition, and none once released', async () => {
        expect(await c().readLease('s-read')).toBeUndefined()
        const lease = acquired(await c().beginTurn({ ...base, sessionId: 's-read' }))
        const held = await c().readLease('s-read')
        expect(held?.remainingMs).toBeGreaterThan(0)
        expect(held?.remainingMs).toBeLessThanOrEqual(LEASE_MS)
        expect(held?.acquiredAtMs).toBe(Number(lease.token.split('.')[0]))
        await c().releaseLease(lease)
        expect(await c().readLease('s-read')).toBeUndefined()
      })

      it('leases of different sessions are independent', async () => {
        acquired(await c().beginTurn({ ...base, sessionId: 's-a' }))
        acquired(await c().beginTurn({ ...base, sessionId: 's-b' }))
      })

      it('a released lease can be taken again, with a new token', async () => {
        const first = acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
        await c().releaseLease(first)
        const second = acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
        expect(second.token).not.toBe(first.token)
      })

      it('expires, then another invocation takes it over', async () => {
        acquired(await c().beginTurn({ ...base, leaseMs: SHORT_MS, sessionId: 's1' }))
        expect((await c().beginTurn({ ...base, sessionId: 's1' })).status).toBe('busy')
        await f().advance(EXPIRE_WAIT_MS)
        acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
      })

      it('renewal by the holder extends the lease', async () => {
        const lease = acquired(await c().beginTurn({ ...base, leaseMs: SHORT_MS, sessionId: 's1' }))
        expect(await c().renewLease(lease, LEASE_MS)).toBe(true)
        await f().advance(EXPIRE_WAIT_MS)
        const again = await c().beginTurn({ ...base, sessionId: 's1' })
        expect(again.status).toBe('busy')
        if (again.status === 'busy') expect(again.retryAfterMs).toBeGreaterThan(SHORT_MS)
      })

      it('times a busy answer from the lease: soon for a young running turn, at the lapse for a silent one', async () => {
        acquired(await c().beginTurn({ ...base, sessionId: 's-run' }))
        const running = await c().beginTurn({ ...base, sessionId: 's-run' })
        // Not the 30 s the lease has left: the turn renews it, so it is alive and just begun.
        expect(running).toMatchObject({ status: 'busy', state: 'running', retryAfterMs: 1000 })
        if (running.status === 'busy') expect(running.heldForMs).toBeGreaterThanOrEqual(0)

        // A lease with far less left than a renewing holder keeps: nobody renewed it for more than
        // two renewal periods, so it is waited out.
        acquired(await c().beginTurn({ ...base, leaseMs: 5000, sessionId: 's-silent' }))
        const silent = await c().beginTurn({ ...base, sessionId: 's-silent' })
        expect(silent).toMatchObject({ status: 'busy', state: 'silent' })
        if (silent.status !== 'busy') throw new Error('expected busy')
        expect(silent.retryAfterMs).toBeGreaterThan(0)
        expect(silent.retryAfterMs).toBeLessThanOrEqual(5000)
      })

      it('a stale token can neither renew, release nor end the new holder’s lease', async () => {
        const stale = acquired(await c().beginTurn({ ...base, leaseMs: SHORT_MS, sessionId: 's1' }))
        await f().advance(EXPIRE_WAIT_MS)
        const holder = acquired(await c().beginTurn({ ...base, sessionId: 's1' }))

        expect(await c().renewLease(stale, LEASE_MS)).toBe(false)
        await c().releaseLease(stale)
        await c().endTurn({ lease: stale, tenant: base.tenant })
        expect((await c().beginTurn({ ...base, sessionId: 's1' })).status).toBe('busy')
        expect(await c().renewLease(holder, LEASE_MS)).toBe(true)

        await c().releaseLease(holder)
        acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
      })

      it('renewing an expired lease nobody took fails and does not resurrect it', async () => {
        const lease = acquired(await c().beginTurn({ ...base, leaseMs: SHORT_MS, sessionId: 's1' }))
        await f().advance(EXPIRE_WAIT_MS)
        expect(await c().renewLease(lease, LEASE_MS)).toBe(false)
        acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
      })

      it('endTurn releases the lease', async () => {
        const lease = acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
        await c().endTurn({ lease, tenant: base.tenant, tip: 0 })
        acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
      })

      it('rejects a non-positive lease duration before any I/O', async () => {
        expect(await outcome(c().beginTurn({ ...base, leaseMs: 0, sessionId: 's1' }))).toBe(
          'invalid_input',
        )
        const lease = acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
        expect(await outcome(c().renewLease(lease, -5))).toBe('invalid_input')
      })
    })

    describe('idempotency', () => {
      const turn = { ...base, sessionId: 's-idem', idempotencyKey: 'key-1' }

      it('forgetSession drops the tip, intents, cancel flag and the named records', async () => {
        const lease = acquired(await c().beginTurn(turn))
        await c().endTurn({
          lease,
          tenant: base.tenant,
          tip: 4,
          idempotency: { key: 'key-1', record: record('turn-1', 4) },
        })
        await c().enqueueIntent('s-idem', { id: 'i1', text: 'later' })
        await c().requestCancel('s-idem', LEASE_MS)
        await c().forgetSession('s-idem', { tenant: base.tenant, keys: ['key-1'] })
        expect(await c().getTip('s-idem')).toBeNull()
        expect(await c().pendingIntents('s-idem')).toEqual([])
        expect(await c().cancelRequested('s-idem')).toBe(false)
        acquired(await c().beginTurn(turn))
      })

      it('replays the recorded outcome after endTurn, without taking the lease', async () => {
        const lease = acquired(await c().beginTurn(turn))
        const first = record('turn-1', 3)
        await c().endTurn({
          lease,
          tenant: base.tenant,
          tip: 3,
          idempotency: { key: 'key-1', record: first },
        })
        const holder = acquired(await c().beginTurn({ ...base, sessionId: 's-idem' }))
        expect(await c().beginTurn(turn)).toEqual({ status: 'replay', record: first })
        expect(await c().renewLease(holder, LEASE_MS)).toBe(true)
        await c().releaseLease(holder)
        expect(await c().beginTurn(turn)).toEqual({ status: 'replay', record: first })
        acquired(await c().beginTurn({ ...base, sessionId: 's-idem' }))
      })

      it('readIdempotency reads the recorded outcome, scoped by tenant, taking nothing', async () => {
        expect(await c().readIdempotency(base.tenant, 'key-1')).toBeUndefined()
        const lease = acquired(await c().beginTurn(turn))
        const first = record('turn-1', 3)
        await c().endTurn({
          lease,
          tenant: base.tenant,
          idempotency: { key: 'key-1', record: first },
        })
        expect(await c().readIdempotency(base.tenant, 'key-1')).toEqual(first)
        expect(await c().readIdempotency(`${base.tenant}-other`, 'key-1')).toBeUndefined()
        expect(await c().readIdempotency(base.tenant, 'key-2')).toBeUndefined()
        acquired(await c().beginTurn({ ...base, sessionId: 's-idem' }))
      })

      it('the first outcome wins', async () => {
        const lease1 = acquired(await c().beginTurn(turn))
        await c().endTurn({
          lease: lease1,
          tenant: base.tenant,
          idempotency: { key: 'key-1', record: record('turn-1', 1) },
        })
        const lease2 = acquired(await c().beginTurn({ ...base, sessionId: 's-idem' }))
        await c().endTurn({
          lease: lease2,
          tenant: base.tenant,
          idempotency: { key: 'key-1', record: record('turn-2', 2) },
        })
        expect(await c().beginTurn(turn)).toEqual({ status: 'replay', record: record('turn-1', 1) })
      })

      it('keys are scoped by tenant, and tenant/key pairs never collide', async () => {
        const lease = acquired(await c().beginTurn({ ...turn, tenant: 't', idempotencyKey: 'x:y' }))
        await c().endTurn({
          lease,
          tenant: 't',
          idempotency: { key: 'x:y', record: record('turn-1', 1) },
        })
        expect((await c().beginTurn({ ...turn, tenant: 't', idempotencyKey: 'x:y' })).status).toBe(
          'replay',
        )
        const other = await c().beginTurn({ ...turn, tenant: 'u', idempotencyKey: 'x:y' })
        expect(other.status).toBe('acquired')
        const lookalike = await c().beginTurn({ ...turn, tenant: 't:x', idempotencyKey: 'y' })
        expect(lookalike.status).toBe('busy')
      })

      it('a record expires after its TTL', async () => {
        const lease = acquired(await c().beginTurn(turn))
        await c().endTurn({
          lease,
          tenant: base.tenant,
          idempotency: { key: 'key-1', record: record('turn-1', 1), ttlSeconds: 1 },
        })
        expect((await c().beginTurn(turn)).status).toBe('replay')
        await f().advance(1_100)
        expect((await c().beginTurn(turn)).status).toBe('acquired')
      })

      it('an unknown key acquires normally', async () => {
        expect((await c().beginTurn({ ...turn, idempotencyKey: 'never-used' })).status).toBe(
          'acquired',
        )
      })
    })

    describe('tip', () => {
      it('is null for a new session and never regresses', async () => {
        expect(await c().getTip('s-tip')).toBeNull()
        await c().setTip('s-tip', 5)
        await c().setTip('s-tip', 3)
        expect(await c().getTip('s-tip')).toBe(5)
        await c().setTip('s-tip', 0)
        expect(await c().getTip('s-tip')).toBe(5)
        await c().setTip('s-tip', 12)
        expect(await c().getTip('s-tip')).toBe(12)
      })

      it('endTurn raises but never lowers it, and beginTurn reports it', async () => {
        await c().setTip('s-tip', 5)
        const lease = acquired(await c().beginTurn({ ...base, sessionId: 's-tip' }))
        await c().endTurn({ lease, tenant: base.tenant, tip: 4 })
        const next = await c().beginTurn({ ...base, sessionId: 's-tip' })
        expect(next).toMatchObject({ status: 'acquired', tip: 5 })
        await c().endTurn({ lease: acquired(next), tenant: base.tenant, tip: 6 })
        acquired(await c().beginTurn({ ...base, sessionId: 's-tip' }))
        expect(await c().beginTurn({ ...base, sessionId: 's-tip' })).toMatchObject({
          status: 'busy',
          tip: 6,
        })
      })

      it('a turn whose lease was lost still records its committed tip', async () => {
        const stale = acquired(await c().beginTurn({ ...base, leaseMs: SHORT_MS, sessionId: 's1' }))
        await f().advance(EXPIRE_WAIT_MS)
        acquired(await c().beginTurn({ ...base, sessionId: 's1' }))
        await c().endTurn({ lease: stale, tenant: base.tenant, tip: 9 })
        expect(await c().getTip('s1')).toBe(9)
        expect((await c().beginTurn({ ...base, sessionId: 's1' })).status).toBe('busy')
      })

      it('rejects negative or fractional batches', async () => {
        expect(await outcome(c().setTip('s-tip', -1))).toBe('invalid_input')
        expect(await outcome(c().setTip('s-tip', 1.5))).toBe('invalid_input')
        const lease = acquired(await c().beginTurn({ ...base, sessionId: 's-tip' }))
        expect(await outcome(c().endTurn({ lease, tenant: base.tenant, tip: -2 }))).toBe(
          'invalid_input',
        )
      })
    })

    describe('cancellation', () => {
      it('raises a cancel flag for the running turn, scoped to the session, until it expires', async () => {
        expect(await c().cancelRequested('s-cancel')).toBe(false)
        await c().requestCancel('s-cancel', SHORT_MS)
        expect(await c().cancelRequested('s-cancel')).toBe(true)
        expect(await c().cancelRequested('s-other')).toBe(false)
        await f().advance(EXPIRE_WAIT_MS)
        expect(await c().cancelRequested('s-cancel')).toBe(false)
      })
    })

    describeCoordinatorIntents(c)
    describeCoordinatorClaims(c, (ms) => f().advance(ms))
    describeCoordinatorActivity(c)
    describeCoordinatorPlaces(c, (ms) => f().advance(ms))
  })
}

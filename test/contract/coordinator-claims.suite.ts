/**
 * The one-time claims of the Coordinator contract (`claimOnce`, the store behind the replay
 * guard of signed messages): the first claim of a key wins, every later one loses until the
 * record expires, whatever the concurrency; and the claim of the coordinator's namespace by a
 * deployment (`claimNamespace`), which never expires. Registered inside `describeCoordinator`, with that
 * suite's fresh coordinator per test.
 */
import { describe, expect, it } from 'vitest'
import { coordinatorReplayGuard, replayGuardsOf } from '../../functions/coordinator-replay-guard.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'

/**
 * Short lease or claim for expiry tests; `advance(EXPIRE_WAIT_MS)` outlives it. On Redis it is
 * real time: long enough that a loaded machine's pause before the check that it still holds
 * cannot outlast it.
 */
export const SHORT_MS = 500
export const EXPIRE_WAIT_MS = 700

async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    if (isTurnlineError(error)) return error.code
    throw error
  }
}

export function describeCoordinatorClaims(
  c: () => Coordinator,
  advance: (ms: number) => Promise<void>,
): void {
  describe('one-time claims', () => {
    it('the first claim of a key wins, a replay loses, other keys are independent', async () => {
      expect(await c().claimOnce('runner-callback:nonce-1', 30_000)).toBe(true)
      expect(await c().claimOnce('runner-callback:nonce-1', 30_000)).toBe(false)
      expect(await c().claimOnce('runner-callback:nonce-2', 30_000)).toBe(true)
      expect(await c().claimOnce('other-scope:nonce-1', 30_000)).toBe(true)
    })

    it('of 10 concurrent claims of one key exactly one wins', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, () => c().claimOnce('race:nonce', 30_000)),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
    })

    it('a claim lives its ttl, then the key can be claimed again', async () => {
      expect(await c().claimOnce('short:nonce', SHORT_MS)).toBe(true)
      expect(await c().claimOnce('short:nonce', SHORT_MS)).toBe(false)
      await advance(EXPIRE_WAIT_MS)
      expect(await c().claimOnce('short:nonce', SHORT_MS)).toBe(true)
    })

    it('tells whether a claim of a key lives, without recording one', async () => {
      expect(await c().isClaimed('read:nonce')).toBe(false)
      expect(await c().claimOnce('read:nonce', SHORT_MS)).toBe(true)
      expect(await c().isClaimed('read:nonce')).toBe(true)
      expect(await c().isClaimed('read:other')).toBe(false)
      expect(await c().claimOnce('read:other', SHORT_MS)).toBe(true)
      await advance(EXPIRE_WAIT_MS)
      expect(await c().isClaimed('read:nonce')).toBe(false)
      expect(await errorCode(c().isClaimed(''))).toBe('invalid_input')
    })

    it('a replay guard on it refuses a message id until the signature window has passed', async () => {
      const guard = coordinatorReplayGuard(c(), 'runner-callback')
      const expires = Date.now() + 60_000
      expect(await guard.claim('nonce:abc', expires)).toBe(true)
      expect(await guard.claim('nonce:abc', expires)).toBe(false)
      expect(await c().claimOnce('runner-callback:nonce:abc', 1_000)).toBe(false)
    })

    it("the app's guards keep webhook deliveries apart from runner callbacks, by delivery id", async () => {
      const guards = replayGuardsOf(c())
      const message = `triage:${'a'.repeat(24)}`
      expect(await guards.webhookReplayGuard.claim(message, Date.now() + 60_000)).toBe('first')
      expect(await guards.webhookReplayGuard.claim(message, Date.now() + 60_000)).toBe('unrecorded')
      expect(await guards.replayGuard.claim(message, Date.now() + 60_000)).toBe(true)
      expect(await c().claimOnce(`webhook-delivery:${message}`, 1_000)).toBe(false)
    })

    it("a webhook delivery's run, once recorded, is known to every later claim of it", async () => {
      const guard = replayGuardsOf(c()).webhookReplayGuard
      const until = Date.now() + 60_000
      expect(await guard.claim('triage:run:1', until)).toBe('first')
      expect(await guard.claim('triage:run:2', until)).toBe('first')
      await guard.recorded('triage:run:1', until)
      expect(await guard.claim('triage:run:1', until)).toBe('recorded')
      expect(await guard.claim('triage:run:2', until)).toBe('unrecorded')
      // Marking it again (a resend that found it unrecorded) changes nothing.
      await guard.recorded('triage:run:1', until)
      expect(await guard.claim('triage:run:1', until)).toBe('recorded')
    })

    it('the first claim of the namespace holds: concurrent and later claims get it back', async () => {
      const claims = ['deployment-a', 'deployment-b', 'deployment-c']
      const holders = await Promise.all(claims.map((claim) => c().claimNamespace(claim)))
      expect(new Set(holders).size).toBe(1)
      expect(claims).toContain(holders[0])
      expect(await c().claimNamespace('deployment-d')).toBe(holders[0])
    })

    it('rejects an empty or overlong key and a non-positive ttl before any I/O', async () => {
      expect(await errorCode(c().claimOnce('', 1_000))).toBe('invalid_input')
      expect(await errorCode(c().claimOnce('x'.repeat(513), 1_000))).toBe('invalid_input')
      expect(await errorCode(c().claimOnce('k', 0))).toBe('invalid_input')
      expect(await errorCode(c().claimOnce('k', 1.5))).toBe('invalid_input')
    })
  })
}

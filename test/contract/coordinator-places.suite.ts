/**
 * The place holds of the Coordinator contract (src/ports/place-holds.ts), behind the exact
 * per-tenant caps (src/core/engine/place-admission.ts): a hold is taken only while fewer holds
 * were taken since the version was read than the caller found places free, whatever the
 * concurrency; a resent hold is held once; a
 * release or a lapse leaves the version; a hold lapses at its deadline. Registered inside
 * `describeCoordinator`, with that suite's fresh coordinator per test.
 */
import { describe, expect, it } from 'vitest'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import { EXPIRE_WAIT_MS, SHORT_MS } from './coordinator-claims.suite.ts'

export function describeCoordinatorPlaces(
  c: () => Coordinator,
  advance: (ms: number) => Promise<void>,
): void {
  describe('place holds', () => {
    it('holds while fewer holds were taken since the read than were free; a resend is held once; a release keeps the version', async () => {
      const scope = 'pending-work/acme'
      const first = await c().readPlaces(scope)
      expect(first.held).toEqual([])
      const one = { version: first.version, free: 1 }
      expect(await c().holdPlace(scope, 'hold-a', one, 30_000)).toBe(true)
      // One place was free at the read and hold-a took it since: refused, nothing held.
      expect(await c().holdPlace(scope, 'hold-b', one, 30_000)).toBe(false)
      // Two were free: hold-a took one, this takes the other.
      expect(await c().holdPlace(scope, 'hold-b', { ...one, free: 2 }, 30_000)).toBe(true)
      expect(await c().holdPlace(scope, 'hold-c', { ...one, free: 2 }, 30_000)).toBe(false)
      // hold-a resent after a lost reply: held, once.
      expect(await c().holdPlace(scope, 'hold-a', one, 30_000)).toBe(true)
      const second = await c().readPlaces(scope)
      expect([...second.held].sort()).toEqual(['hold-a', 'hold-b'])
      expect(Number(second.version) - Number(first.version)).toBe(2)
      await c().releasePlace(scope, 'hold-a')
      await c().releasePlace(scope, 'never-held')
      const third = await c().readPlaces(scope)
      expect(third).toEqual({ version: second.version, held: ['hold-b'] })
      expect(
        await c().holdPlace(scope, 'hold-c', { version: third.version, free: 1 }, 30_000),
      ).toBe(true)
      // A version ahead of the book's (the book was lost since): refused.
      const ahead = { version: String(Number(third.version) + 5), free: 10 }
      expect(await c().holdPlace(scope, 'hold-d', ahead, 30_000)).toBe(false)
      // Scopes are apart.
      expect((await c().readPlaces('pending-work/other')).held).toEqual([])
    })

    it('of 10 concurrent holds on one read exactly as many as were free are held', async () => {
      for (const free of [1, 3]) {
        const scope = `scheduled-loops/acme-${free}`
        const { version } = await c().readPlaces(scope)
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, n) =>
            c().holdPlace(scope, `loop-${n}`, { version, free }, 30_000),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(free)
        expect((await c().readPlaces(scope)).held).toHaveLength(free)
      }
    })

    it('a hold lapses at its deadline', async () => {
      const scope = 'pending-work/lapse'
      const { version } = await c().readPlaces(scope)
      expect(await c().holdPlace(scope, 'hold-a', { version, free: 1 }, SHORT_MS)).toBe(true)
      expect((await c().readPlaces(scope)).held).toEqual(['hold-a'])
      await advance(EXPIRE_WAIT_MS)
      expect((await c().readPlaces(scope)).held).toEqual([])
    })

    it('refuses a scope or id outside its characters before any I/O', async () => {
      await expect(c().readPlaces('a b')).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(
        c().holdPlace('s', 'x'.repeat(201), { version: '0', free: 1 }, 1000),
      ).rejects.toMatchObject({
        code: 'invalid_input',
      })
    })
  })
}

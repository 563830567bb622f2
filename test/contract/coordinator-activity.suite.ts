/**
 * The activity index of the Coordinator contract (src/ports/activity-index.ts): positions from a
 * clock that never goes back, the moves a walk needs to keep its order, filling in and dropping.
 * Registered inside `describeCoordinator`, with that suite's fresh coordinator per test; each
 * test uses a tenant of its own.
 */
import { describe, expect, it } from 'vitest'
import type { ActivityScope } from '../../src/ports/activity-index.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'

const T = 1_796_000_000_123

let n = 0
const fresh = (): ActivityScope => ({ tenant: `act${Date.now()}x${n++}`, workspace: 'w' })

export function describeCoordinatorActivity(c: () => Coordinator): void {
  describe('activity index', () => {
    it('orders sessions by their last touch, on a clock that never goes back', async () => {
      const scope = fresh()
      await c().touchActivity({ ...scope, sessionId: 'a', atMs: T })
      await c().touchActivity({ ...scope, sessionId: 'b', atMs: T + 5 })
      // A touch from a clock behind still goes to the top, one ms after the last position.
      await c().touchActivity({ ...scope, sessionId: 'c', atMs: T - 1000 })
      const scan = await c().scanActivity({ ...scope, direction: 'desc', limit: 10 })
      expect(scan.asOf).toBe(T + 6)
      expect(scan.beyond).toEqual([
        { sessionId: 'c', position: T + 6 },
        { sessionId: 'b', position: T + 5 },
        { sessionId: 'a', position: T },
      ])
      expect(scan.moved).toEqual([])
      expect(scan.filledAtMs).toBeUndefined()
      const asc = await c().scanActivity({ ...scope, direction: 'asc', limit: 2 })
      expect(asc.beyond.map((e) => e.sessionId)).toEqual(['a', 'b'])
      const other = await c().scanActivity({ ...fresh(), direction: 'desc', limit: 10 })
      expect(other).toMatchObject({ asOf: 0, beyond: [] })
    })

    it('a scan from a boundary gives what lies beyond it, ties and the moves since asOf', async () => {
      const scope = fresh()
      for (const [i, id] of ['a', 'b', 'c', 'd'].entries()) {
        await c().touchActivity({ ...scope, sessionId: id, atMs: T + i })
      }
      const asOf = T + 3
      // Moved after asOf: c twice (its first move counts), a once.
      await c().touchActivity({ ...scope, sessionId: 'c', atMs: T + 10 })
      await c().touchActivity({ ...scope, sessionId: 'c', atMs: T + 11 })
      await c().touchActivity({ ...scope, sessionId: 'a', atMs: T + 12 })
      const scan = await c().scanActivity({
        ...scope,
        direction: 'desc',
        asOf,
        boundary: T + 3,
        limit: 5,
      })
      expect(scan.asOf).toBe(asOf)
      expect(scan.beyond).toEqual([{ sessionId: 'b', position: T + 1 }])
      expect(scan.ties).toEqual([{ sessionId: 'd', position: T + 3 }])
      expect(scan.moved).toEqual([
        { sessionId: 'c', from: T + 2, position: T + 11 },
        { sessionId: 'a', from: T, position: T + 12 },
      ])
      // A dropped session leaves the index and its moves.
      await c().dropActivity(scope, ['c'])
      const after = await c().scanActivity({ ...scope, direction: 'asc', asOf, limit: 5 })
      expect(after.moved.map((m) => m.sessionId)).toEqual(['a'])
      expect(after.beyond.map((e) => e.sessionId)).toEqual(['b', 'd'])
    })

    it('endTurn touches the session in the same call', async () => {
      const scope = fresh()
      await c().touchActivity({ ...scope, sessionId: 'x', atMs: T })
      await c().touchActivity({ ...scope, sessionId: 'y', atMs: T + 1 })
      const begin = await c().beginTurn({
        sessionId: `${scope.tenant}/x`,
        tenant: scope.tenant,
        leaseMs: 30_000,
      })
      if (begin.status !== 'acquired') throw new Error(begin.status)
      await c().endTurn({
        lease: begin.lease,
        tenant: scope.tenant,
        tip: 1,
        activity: { ...scope, sessionId: 'x', atMs: T + 1 },
      })
      const scan = await c().scanActivity({ ...scope, direction: 'desc', limit: 10, asOf: T + 1 })
      expect(scan.moved).toEqual([{ sessionId: 'x', from: T, position: T + 2 }])
      expect(await c().readLease(`${scope.tenant}/x`)).toBeUndefined()
      expect(await c().getTip(`${scope.tenant}/x`)).toBe(1)
    })

    it('fills in only what it lacks, and says when it was filled', async () => {
      const scope = fresh()
      await c().touchActivity({ ...scope, sessionId: 'kept', atMs: T + 50 })
      expect(await c().missingActivity(scope, ['kept', 'old1', 'old2'])).toEqual(['old1', 'old2'])
      await c().backfillActivity(
        scope,
        [
          { sessionId: 'kept', position: T },
          { sessionId: 'old1', position: T + 10 },
          { sessionId: 'old2', position: T + 20 },
        ],
        T + 99,
      )
      const scan = await c().scanActivity({ ...scope, direction: 'desc', limit: 10 })
      expect(scan.filledAtMs).toBe(T + 99)
      expect(scan.beyond).toEqual([
        { sessionId: 'kept', position: T + 50 },
        { sessionId: 'old2', position: T + 20 },
        { sessionId: 'old1', position: T + 10 },
      ])
      expect(await c().missingActivity(scope, ['kept', 'old1'])).toEqual([])
      await c().dropActivity(scope, ['old1', 'nothing'])
      expect(await c().missingActivity(scope, ['old1'])).toEqual(['old1'])
    })
  })
}

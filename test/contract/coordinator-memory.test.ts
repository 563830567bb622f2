import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import type { Clock } from '../../src/ports/clock.ts'
import { acquired, describeCoordinator } from './coordinator.suite.ts'

class ManualClock implements Clock {
  constructor(private time = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.time
  }
  advance(ms: number): void {
    this.time += ms
  }
}

describeCoordinator('memory', async () => {
  const clock = new ManualClock()
  return {
    coordinator: new MemoryCoordinator({ clock }),
    advance: async (ms) => clock.advance(ms),
    cleanup: async () => {},
  }
})

describe('MemoryCoordinator specifics', () => {
  it('reports the exact remaining lease time as retryAfterMs', async () => {
    const clock = new ManualClock()
    const coordinator = new MemoryCoordinator({ clock })
    acquired(await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs: 1_000 }))
    clock.advance(400)
    expect(await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs: 1_000 })).toEqual({
      status: 'busy',
      retryAfterMs: 600,
      tip: null,
    })
  })

  it('lets the tip expire after tipTtlSeconds (it is only a hint)', async () => {
    const clock = new ManualClock()
    const coordinator = new MemoryCoordinator({ clock, tipTtlSeconds: 10 })
    await coordinator.setTip('s', 4)
    clock.advance(9_000)
    await coordinator.setTip('s', 2)
    clock.advance(9_000)
    expect(await coordinator.getTip('s')).toBe(4)
    clock.advance(1_001)
    expect(await coordinator.getTip('s')).toBeNull()
  })

  it('returns copies: callers cannot mutate stored intents', async () => {
    const coordinator = new MemoryCoordinator()
    await coordinator.enqueueIntent('s', { id: 'a', text: 'one' })
    const [first] = await coordinator.pendingIntents('s')
    if (first) first.text = 'changed'
    expect(await coordinator.pendingIntents('s')).toEqual([{ id: 'a', text: 'one' }])
  })
})

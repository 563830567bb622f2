import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import type { Clock } from '../../src/ports/clock.ts'
import { describeTenantLimiter } from './tenant-limiter.suite.ts'

class ManualClock implements Clock {
  constructor(private time = Date.UTC(2026, 0, 1, 12)) {}
  now(): number {
    return this.time
  }
  advance(ms: number): void {
    this.time += ms
  }
}

describeTenantLimiter('memory', async () => {
  const clock = new ManualClock()
  const windowMs = 60_000
  return {
    limiter: new MemoryTenantLimiter({ clock, windowMs }),
    windowMs,
    advance: async (ms) => clock.advance(ms),
    now: () => clock.now(),
    cleanup: async () => {},
  }
})

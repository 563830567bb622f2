import { expect, it } from 'vitest'
import { MemoryFailureThrottle } from '../../adapters/memory/memory-failure-throttle.ts'
import { describeFailureThrottle, ManualClock } from './failure-throttle.suite.ts'

describeFailureThrottle('memory', async () => {
  const clock = new ManualClock()
  const throttle = new MemoryFailureThrottle({ clock })
  return {
    throttle,
    sibling: throttle,
    advance: (ms) => {
      clock.time += ms
    },
    cleanup: async () => {},
  }
})

it('holds at most maxBuckets: failures from ever new buckets cannot grow it without end', async () => {
  const clock = new ManualClock()
  const throttle = new MemoryFailureThrottle({ clock, maxBuckets: 100 })
  const rule = { capacity: 2, refillMs: 1_000 }
  for (let i = 0; i < 500; i++) await throttle.fail([{ id: `spray-${i}`, rule }])
  expect(throttle.size).toBeLessThanOrEqual(100)
  // The buckets failing most recently are the ones kept.
  await throttle.fail([{ id: 'recent', rule }])
  await throttle.fail([{ id: 'recent', rule }])
  for (let i = 0; i < 20; i++) await throttle.fail([{ id: `more-${i}`, rule }])
  expect(throttle.size).toBeLessThanOrEqual(100)
  expect((await throttle.fail([{ id: 'recent', rule }]))[0]?.counted).toBe(false)
})

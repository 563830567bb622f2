import type { Coordinator } from '../../src/ports/coordinator.ts'

/** A coordinator that counts its calls (each one round trip to Redis in a deployment). */
export function countingCoordinator(inner: Coordinator): {
  coordinator: Coordinator
  calls: () => number
} {
  let calls = 0
  const coordinator = new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls++
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { coordinator, calls: () => calls }
}

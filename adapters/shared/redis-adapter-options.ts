import { checkDeadline, DEFAULT_COORDINATOR_DEADLINE, type IoDeadline } from './io-deadline.ts'

/**
 * The options a shared Redis class (`RedisCoordinator`, `RedisTenantLimiter`,
 * `RedisFailureThrottle`) gets from an adapter (Upstash REST, TCP): the adapter's own, their
 * deadline (the coordinator's default when none is given, checked under the adapter's `name`),
 * and the commands on the adapter's transport, whose attempts end after the deadline's
 * `attemptMs`.
 */
export function onTransport<O extends { deadline?: IoDeadline }, C>(
  name: string,
  options: O,
  Commands: new (connection: O, attemptMs: number) => C,
): O & { deadline: IoDeadline; commands: C } {
  const deadline = options.deadline ?? DEFAULT_COORDINATOR_DEADLINE
  checkDeadline(`${name} deadline`, deadline)
  return { ...options, deadline, commands: new Commands(options, deadline.attemptMs) }
}

import type { Telemetry, TelemetryAttributes } from '../../src/ports/telemetry.ts'

/**
 * The same object with each of its methods run in a span `<prefix> <method>` (a client span:
 * a call to a store or a coordinator), so a slow backend shows in a turn's trace. Methods the
 * target lacks stay absent; properties that are not functions pass through.
 */
export function tracedCalls<T extends object>(
  target: T,
  telemetry: Telemetry,
  prefix: string,
  attributes: TelemetryAttributes,
): T {
  return new Proxy(target, {
    get(object, property) {
      // The target as the receiver: getters of private fields must see the real object.
      const value: unknown = Reflect.get(object, property, object)
      if (typeof value !== 'function' || typeof property !== 'string') return value
      return (...args: unknown[]) =>
        telemetry.span(
          `${prefix} ${property}`,
          { kind: 'client', attributes: { ...attributes, 'turnline.operation': property } },
          async () => (value as (...a: unknown[]) => unknown).apply(object, args),
        )
    },
  })
}

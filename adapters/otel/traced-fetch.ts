import type { OtelTelemetry } from './otel-telemetry.ts'

/**
 * A fetch that passes the current trace on: every request carries the W3C `traceparent` of the
 * span it is made in (HTTP tools, hooks, MCP servers, the sandbox runner), so the receiver's
 * spans join the caller's trace. A `traceparent` the caller set itself is kept.
 */
export function tracedFetch(fetchImpl: typeof fetch, telemetry: OtelTelemetry): typeof fetch {
  return (input, init) => {
    const trace = telemetry.propagationHeaders()
    if (trace.traceparent === undefined) return fetchImpl(input, init)
    const headers = new Headers(
      init?.headers ?? (input instanceof Request ? input.headers : undefined),
    )
    if (!headers.has('traceparent')) headers.set('traceparent', trace.traceparent)
    return fetchImpl(input, { ...init, headers })
  }
}

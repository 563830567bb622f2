import { describe, expect, it } from 'vitest'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import { until } from '../support/until.ts'

/**
 * An OTLP endpoint may carry its collector's credentials in the URL (`?api_key=…`, or a
 * `user:password@` that fetch refuses and names in its error). `npm start` with such endpoints
 * that fail: the start notice and the `telemetry export failed` lines name the endpoints
 * without the credentials.
 */
const fx = useEntryWithMock('telemetry-endpoint-secrets', {
  TURNLINE_LOG: 'json',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces?api_key=OTLP-QUERY-SECRET',
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://otlp-user:OTLP-PASSWORD@127.0.0.1:9/v1/metrics',
  OTEL_BSP_SCHEDULE_DELAY: '50',
  OTEL_METRIC_EXPORT_INTERVAL: '100',
})

describe('OTLP endpoints with credentials', () => {
  it('are named without them, at start and when an export fails', async () => {
    const headers = { 'content-type': 'application/json' }
    const created = await fetch(`${fx.url}/v1/sessions`, { method: 'POST', headers, body: '{}' })
    expect(created.status).toBe(201)
    const failures = await until('both export failures', () => {
      const lines = fx.server
        .output()
        .split('\n')
        .filter((line) => line.includes('"telemetry export failed"'))
      return lines.length >= 2 ? lines : undefined
    })
    const output = fx.server.output()
    expect(output).toContain(
      'telemetry: traces to http://127.0.0.1:9/v1/traces?api_key=… (OTLP/HTTP protobuf), metrics to http://127.0.0.1:9/v1/metrics',
    )
    expect(failures.join('\n')).toContain('"url":"http://127.0.0.1:9/v1/traces?api_key=…"')
    expect(output).not.toContain('OTLP-QUERY-SECRET')
    expect(output).not.toContain('OTLP-PASSWORD')
  })
})

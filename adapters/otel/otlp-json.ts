import type { SpanKind, TelemetryAttributes, TelemetryValue } from '../../src/ports/telemetry.ts'

/**
 * The OTLP/JSON encoding (OpenTelemetry protocol, JSON mapping of its protobuf messages): ids
 * as lowercase hex, enums as integers, 64-bit integers as decimal strings, field names in
 * lowerCamelCase. What `ExportTraceServiceRequest` and `ExportMetricsServiceRequest` carry.
 */

export type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpAnyValue[] } }

export interface OtlpKeyValue {
  key: string
  value: OtlpAnyValue
}

/** A finished span, as the exporter keeps it until it is sent. */
export interface FinishedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: SpanKind
  startTimeUnixNano: string
  endTimeUnixNano: string
  attributes: OtlpKeyValue[]
  status: { code: 0 | 1 | 2; message?: string }
}

const KIND: Record<SpanKind, number> = { internal: 1, server: 2, client: 3 }

export function otlpValue(value: TelemetryValue): OtlpAnyValue {
  if (typeof value === 'string') return { stringValue: value }
  if (typeof value === 'boolean') return { boolValue: value }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value }
  }
  return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } }
}

export function otlpAttributes(attributes: TelemetryAttributes | undefined): OtlpKeyValue[] {
  const out: OtlpKeyValue[] = []
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value !== undefined) out.push({ key, value: otlpValue(value) })
  }
  return out
}

/** Epoch milliseconds (fractional) as OTLP nanoseconds. */
export function unixNano(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString()
}

export const SCOPE = { name: 'turnline', version: '0.1.0' }

export function traceRequest(resource: OtlpKeyValue[], spans: readonly FinishedSpan[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: resource },
        scopeSpans: [
          {
            scope: SCOPE,
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: KIND[span.kind],
              startTimeUnixNano: span.startTimeUnixNano,
              endTimeUnixNano: span.endTimeUnixNano,
              attributes: span.attributes,
              status: span.status,
            })),
          },
        ],
      },
    ],
  }
}

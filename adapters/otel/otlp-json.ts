import type { TelemetryAttributes, TelemetryValue } from '../../src/ports/telemetry.ts'

/**
 * The OTLP/JSON encoding (OpenTelemetry protocol, JSON mapping of its protobuf messages) of
 * metric points: enums as integers, 64-bit integers as decimal strings, field names in
 * lowerCamelCase — what `ExportMetricsServiceRequest` carries (spans go through the SDK's
 * exporter).
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

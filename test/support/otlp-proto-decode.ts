import { createRequire } from 'node:module'

/**
 * Decodes an OTLP/HTTP protobuf trace export request with the OpenTelemetry project's own
 * protobuf definitions: the generated protobufjs code of `@opentelemetry/otlp-transformer`
 * 0.216.0 (a devDependency alias, `otlp-transformer-0216`; 0.217 keeps only the metrics definitions, later releases none).
 * The result has the OTLP/JSON shape — trace and span ids in hex, 64-bit numbers as decimal
 * strings — so one schema checks what either encoding brought.
 */
interface MessageType {
  decode(bytes: Uint8Array): unknown
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>
}
interface GeneratedRoot {
  opentelemetry: {
    proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } }
  }
}

const root = createRequire(import.meta.url)(
  'otlp-transformer-0216/build/src/generated/root.js',
) as GeneratedRoot
const ExportTraceServiceRequest =
  root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId'])

export function decodeProtobufTraceRequest(body: Uint8Array): unknown {
  const message = ExportTraceServiceRequest.decode(body)
  const plain = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    bytes: String,
    enums: Number,
    arrays: true,
    defaults: true,
  })
  return hexIds(plain)
}

/** protobufjs writes `bytes` as base64; OTLP/JSON writes ids as hex, and omits an empty one. */
function hexIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIds)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (ID_FIELDS.has(key) && typeof field === 'string') {
      if (field !== '') out[key] = Buffer.from(field, 'base64').toString('hex')
    } else {
      out[key] = hexIds(field)
    }
  }
  return out
}

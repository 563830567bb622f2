import { Hono } from 'hono'
import * as z from 'zod'
import { serveApp } from './http-server.ts'
import { decodeProtobufTraceRequest } from './otlp-proto-decode.ts'

/**
 * A real OTLP/HTTP receiver (as a collector's `otlphttp` receiver takes it): `POST /v1/traces`
 * in protobuf (decoded with the OpenTelemetry definitions, otlp-proto-decode.ts) or JSON, and
 * `POST /v1/metrics` in JSON, each request checked against the OTLP JSON shape and kept decoded
 * — spans with their attributes as plain values, metrics by name — with the encoding each trace
 * export came in.
 */
const AnyValue: z.ZodType<unknown> = z.lazy(() =>
  z.union([
    z.object({ stringValue: z.string() }).transform((v) => v.stringValue),
    z.object({ boolValue: z.boolean() }).transform((v) => v.boolValue),
    z
      .object({ intValue: z.union([z.string().regex(/^-?\d+$/), z.number().int()]) })
      .transform((v) => Number(v.intValue)),
    z.object({ doubleValue: z.number() }).transform((v) => v.doubleValue),
    z
      .object({ arrayValue: z.object({ values: z.array(AnyValue) }) })
      .transform((v) => v.arrayValue.values),
  ]),
)
const Attributes = z
  .array(z.object({ key: z.string().min(1), value: AnyValue }))
  .transform((list) => Object.fromEntries(list.map((kv) => [kv.key, kv.value])))
const Nanos = z.string().regex(/^\d{19}$/)
const Resource = z.object({ attributes: Attributes })
const Scope = z.object({ name: z.string(), version: z.string().optional() })

const SpanSchema = z.object({
  traceId: z.string().regex(/^[0-9a-f]{32}$/),
  spanId: z.string().regex(/^[0-9a-f]{16}$/),
  parentSpanId: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
  name: z.string().min(1),
  kind: z.number().int().min(0).max(5),
  startTimeUnixNano: Nanos,
  endTimeUnixNano: Nanos,
  attributes: Attributes,
  status: z.object({ code: z.number().int().min(0).max(2), message: z.string().optional() }),
})
const TraceRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: Resource,
      scopeSpans: z.array(z.object({ scope: Scope, spans: z.array(SpanSchema) })),
    }),
  ),
})

const Point = z.object({
  attributes: Attributes,
  startTimeUnixNano: Nanos,
  timeUnixNano: Nanos,
})
const HistogramPoint = Point.extend({
  count: z.string().regex(/^\d+$/).transform(Number),
  sum: z.number(),
  bucketCounts: z.array(z.string().regex(/^\d+$/).transform(Number)),
  explicitBounds: z.array(z.number()),
})
const SumPoint = Point.extend({ asInt: z.string().regex(/^\d+$/).transform(Number) })
const MetricSchema = z.object({
  name: z.string(),
  unit: z.string(),
  histogram: z
    .object({ aggregationTemporality: z.literal(2), dataPoints: z.array(HistogramPoint) })
    .optional(),
  sum: z
    .object({
      aggregationTemporality: z.literal(2),
      isMonotonic: z.boolean(),
      dataPoints: z.array(SumPoint),
    })
    .optional(),
})
const MetricsRequest = z.object({
  resourceMetrics: z.array(
    z.object({
      resource: Resource,
      scopeMetrics: z.array(z.object({ scope: Scope, metrics: z.array(MetricSchema) })),
    }),
  ),
})

export type ReceivedSpan = z.infer<typeof SpanSchema> & {
  resource: Record<string, unknown>
  scope: z.infer<typeof Scope>
}
export type ReceivedMetric = z.infer<typeof MetricSchema>

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  spans: ReceivedSpan[]
  /** The encoding of each trace export request, in arrival order. */
  traceEncodings: ('protobuf' | 'json')[]
  /** The latest export of each metric (cumulative: the latest holds everything). */
  metrics: Map<string, ReceivedMetric>
  /** Requests whose body was not valid OTLP JSON (a test fails on any). */
  rejected: string[]
  close(): Promise<void>
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const metrics = new Map<string, ReceivedMetric>()
  const rejected: string[] = []
  const traceEncodings: ('protobuf' | 'json')[] = []
  const app = new Hono()
  app.post('/v1/traces', async (c) => {
    const type = c.req.header('content-type')
    const encoding =
      type === 'application/x-protobuf' ? 'protobuf' : type === 'application/json' ? 'json' : null
    if (encoding === null) {
      rejected.push(`traces: content-type ${type}`)
      return c.json({}, 415)
    }
    const body =
      encoding === 'json'
        ? await c.req.json()
        : decodeProtobufTraceRequest(new Uint8Array(await c.req.arrayBuffer()))
    const parsed = TraceRequest.safeParse(body)
    if (!parsed.success) {
      rejected.push(`traces (${encoding}): ${parsed.error.message}`)
      return c.json({}, 400)
    }
    traceEncodings.push(encoding)
    for (const rs of parsed.data.resourceSpans) {
      for (const ss of rs.scopeSpans) {
        for (const span of ss.spans) {
          spans.push({ ...span, resource: rs.resource.attributes, scope: ss.scope })
        }
      }
    }
    return c.json({})
  })
  app.post('/v1/metrics', async (c) => {
    const parsed = MetricsRequest.safeParse(await c.req.json())
    if (!parsed.success) {
      rejected.push(`metrics: ${parsed.error.message}`)
      return c.json({}, 400)
    }
    for (const rm of parsed.data.resourceMetrics) {
      for (const sm of rm.scopeMetrics) {
        for (const metric of sm.metrics) metrics.set(metric.name, metric)
      }
    }
    return c.json({})
  })
  const server = await serveApp(app)
  return {
    url: server.url,
    spans,
    traceEncodings,
    metrics,
    rejected,
    close: () => server.close(),
  }
}

import type { CounterName, HistogramName, TelemetryAttributes } from '../../src/ports/telemetry.ts'
import { type OtlpKeyValue, otlpAttributes, SCOPE, unixNano } from './otlp-json.ts'

interface Instrument {
  description: string
  unit: string
  /** Explicit bucket boundaries (histograms only). */
  bounds?: readonly number[]
}

const SECONDS_GEN_AI = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]

/** The instruments, with the bucket boundaries the semantic conventions advise. */
const HISTOGRAMS: Record<HistogramName, Instrument> = {
  'gen_ai.client.token.usage': {
    description: 'Tokens used by a model request, by gen_ai.token.type (input, output).',
    unit: '{token}',
    bounds: [
      1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
    ],
  },
  'gen_ai.client.operation.duration': {
    description: 'Duration of a model request.',
    unit: 's',
    bounds: SECONDS_GEN_AI,
  },
  'turnline.turn.duration': {
    description: 'Duration of a turn-stepping call, by op, status and outcome.',
    unit: 's',
    bounds: SECONDS_GEN_AI,
  },
  'http.server.request.duration': {
    description: 'Duration of an HTTP request, by method, route and status code.',
    unit: 's',
    bounds: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  },
}

const COUNTERS: Record<CounterName, Instrument> = {
  'turnline.turns': {
    description: 'Turn-stepping calls, by op, status and outcome.',
    unit: '{turn}',
  },
  'turnline.http.server.rejections': {
    description: 'Requests answered 429 or 5xx, by route and status code.',
    unit: '{request}',
  },
}

interface HistogramPoint {
  attributes: OtlpKeyValue[]
  count: number
  sum: number
  min: number
  max: number
  buckets: number[]
}

interface SumPoint {
  attributes: OtlpKeyValue[]
  value: number
}

/**
 * Cumulative aggregation of every instrument since the process started (aggregation
 * temporality cumulative), one data point per distinct attribute set.
 */
export class MetricStore {
  private readonly histograms = new Map<HistogramName, Map<string, HistogramPoint>>()
  private readonly sums = new Map<CounterName, Map<string, SumPoint>>()
  private readonly startNano: string

  constructor(startMs: number) {
    this.startNano = unixNano(startMs)
  }

  record(name: HistogramName, value: number, attributes: TelemetryAttributes): void {
    const bounds = HISTOGRAMS[name].bounds ?? []
    const point = pointOf(this.histograms, name, attributes, (attrs) => ({
      attributes: attrs,
      count: 0,
      sum: 0,
      min: value,
      max: value,
      buckets: new Array<number>(bounds.length + 1).fill(0),
    }))
    point.count += 1
    point.sum += value
    point.min = Math.min(point.min, value)
    point.max = Math.max(point.max, value)
    const bucket = bounds.findIndex((bound) => value <= bound)
    const index = bucket === -1 ? bounds.length : bucket
    point.buckets[index] = (point.buckets[index] ?? 0) + 1
  }

  count(name: CounterName, value: number, attributes: TelemetryAttributes): void {
    pointOf(this.sums, name, attributes, (attrs) => ({ attributes: attrs, value: 0 })).value +=
      value
  }

  get empty(): boolean {
    return this.histograms.size === 0 && this.sums.size === 0
  }

  /** An ExportMetricsServiceRequest of every instrument's points as of `nowMs`. */
  exportRequest(resource: OtlpKeyValue[], nowMs: number) {
    const time = { startTimeUnixNano: this.startNano, timeUnixNano: unixNano(nowMs) }
    const metrics = [
      ...[...this.histograms].map(([name, points]) => ({
        name,
        description: HISTOGRAMS[name].description,
        unit: HISTOGRAMS[name].unit,
        histogram: {
          aggregationTemporality: 2,
          dataPoints: [...points.values()].map((p) => ({
            attributes: p.attributes,
            ...time,
            count: String(p.count),
            sum: p.sum,
            min: p.min,
            max: p.max,
            bucketCounts: p.buckets.map(String),
            explicitBounds: HISTOGRAMS[name].bounds ?? [],
          })),
        },
      })),
      ...[...this.sums].map(([name, points]) => ({
        name,
        description: COUNTERS[name].description,
        unit: COUNTERS[name].unit,
        sum: {
          aggregationTemporality: 2,
          isMonotonic: true,
          dataPoints: [...points.values()].map((p) => ({
            attributes: p.attributes,
            ...time,
            asInt: String(p.value),
          })),
        },
      })),
    ]
    return {
      resourceMetrics: [
        { resource: { attributes: resource }, scopeMetrics: [{ scope: SCOPE, metrics }] },
      ],
    }
  }
}

function pointOf<N, P>(
  table: Map<N, Map<string, P>>,
  name: N,
  attributes: TelemetryAttributes,
  create: (attributes: OtlpKeyValue[]) => P,
): P {
  let points = table.get(name)
  if (!points) {
    points = new Map()
    table.set(name, points)
  }
  const encoded = otlpAttributes(attributes).sort((a, b) => (a.key < b.key ? -1 : 1))
  const key = JSON.stringify(encoded)
  let point = points.get(key)
  if (!point) {
    point = create(encoded)
    points.set(key, point)
  }
  return point
}

import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  type ActiveSpan,
  type CounterName,
  type HistogramName,
  NO_SPAN,
  type OpenSpan,
  type SpanOptions,
  type Telemetry,
  type TelemetryAttributes,
  type TelemetryValue,
} from '../../src/ports/telemetry.ts'
import { backgroundTimer } from './background-timer.ts'
import { MetricStore } from './metric-store.ts'
import { type ExportFailureLog, type OtlpEndpoint, OtlpExporter } from './otlp-exporter.ts'
import { type OtlpKeyValue, otlpAttributes, unixNano } from './otlp-json.ts'
import { type BatchLimits, SpanBatcher } from './span-batcher.ts'
import { parseTraceparent, randomHexId, type SpanContext, traceparentOf } from './trace-context.ts'
import { type SamplerConfig, sampled } from './trace-sampler.ts'

/** What the OTEL_* variables configure (functions/telemetry-env.ts reads them). */
export interface OtelSettings {
  /** Absent: no traces (OTEL_TRACES_EXPORTER=none). */
  traces?: OtlpEndpoint
  /** Absent: no metrics (OTEL_METRICS_EXPORTER=none). */
  metrics?: OtlpEndpoint
  resource: TelemetryAttributes
  sampler: SamplerConfig
  batch: BatchLimits
  /** OTEL_METRIC_EXPORT_INTERVAL (ms). */
  metricIntervalMs: number
  captureContent: boolean
}

/** The async context a runtime offers (AsyncLocalStorage has this shape). */
export interface ContextStorage<T> {
  run<R>(store: T, callback: () => R): R
  getStore(): T | undefined
}

/**
 * Telemetry exported over OTLP/HTTP (JSON) to the collector the OTEL_* variables name. The
 * current span lives in the runtime's async context, so spans opened below a request — a tool
 * call, a storage call, a model request — nest under it, and calls out carry its `traceparent`.
 */
export class OtelTelemetry implements Telemetry {
  readonly enabled = true
  readonly captureContent: boolean
  private readonly batcher: SpanBatcher | undefined
  private readonly metrics: MetricStore
  private readonly metricExporter: OtlpExporter | undefined
  private readonly resource: OtlpKeyValue[]
  private cancelMetricTimer: (() => void) | undefined

  constructor(
    private readonly settings: OtelSettings,
    private readonly storage: ContextStorage<SpanContext>,
    fetchImpl: typeof fetch,
    log: ExportFailureLog,
  ) {
    this.captureContent = settings.captureContent
    this.resource = otlpAttributes(settings.resource)
    this.batcher = settings.traces
      ? new SpanBatcher(
          new OtlpExporter(settings.traces, fetchImpl, log),
          this.resource,
          settings.batch,
        )
      : undefined
    this.metrics = new MetricStore(Date.now())
    this.metricExporter = settings.metrics
      ? new OtlpExporter(settings.metrics, fetchImpl, log)
      : undefined
    this.scheduleMetrics()
  }

  async span<T>(
    name: string,
    options: SpanOptions,
    run: (span: ActiveSpan) => Promise<T>,
  ): Promise<T> {
    const opened = this.open(name, options)
    if (!opened) return run(NO_SPAN)
    const { context, span } = opened
    let deferred = false
    const active: ActiveSpan = {
      ...span,
      deferEnd: () => {
        deferred = true
        return span.end
      },
    }
    try {
      return await this.storage.run(context, () => run(active))
    } catch (error) {
      span.fail(errorTypeOf(error), error instanceof Error ? error.message : String(error))
      throw error
    } finally {
      if (!deferred) span.end()
    }
  }

  start(name: string, options: SpanOptions): OpenSpan {
    return this.open(name, options)?.span ?? NO_SPAN
  }

  record(name: HistogramName, value: number, attributes: TelemetryAttributes): void {
    if (this.metricExporter) this.metrics.record(name, value, attributes)
  }

  count(name: CounterName, value: number, attributes: TelemetryAttributes): void {
    if (this.metricExporter) this.metrics.count(name, value, attributes)
  }

  /** The W3C trace context headers of the current span, for a call out (none outside a trace). */
  propagationHeaders(): Record<string, string> {
    const context = this.storage.getStore()
    return context ? { traceparent: traceparentOf(context) } : {}
  }

  /** Sends every finished span and the metrics now, and waits for the exports to end. */
  async flush(): Promise<void> {
    await Promise.all([this.batcher?.flush(), this.exportMetrics()])
  }

  /** The final flush: no more timers. */
  async shutdown(): Promise<void> {
    this.cancelMetricTimer?.()
    this.cancelMetricTimer = undefined
    await this.flush()
  }

  /**
   * A new span's context (a child of the current span, or of the remote parent of a server
   * span) and, when the trace is recorded, the span itself; undefined when traces are off.
   */
  private open(
    name: string,
    options: SpanOptions,
  ): { context: SpanContext; span: OpenSpan } | undefined {
    const batcher = this.batcher
    if (!batcher) return undefined
    const remote = options.kind === 'server' ? parseTraceparent(options.remoteParent) : undefined
    const parent = options.kind === 'server' ? remote : this.storage.getStore()
    const traceId = parent?.traceId ?? randomHexId(16)
    const context: SpanContext = {
      traceId,
      spanId: randomHexId(8),
      sampled: parent && !remote ? parent.sampled : sampled(this.settings.sampler, traceId, remote),
    }
    if (!context.sampled) return { context, span: NO_SPAN }
    const attributes: Record<string, TelemetryValue | undefined> = { ...options.attributes }
    let status: { code: 0 | 1 | 2; message?: string } = { code: 0 }
    let spanName = name
    let ended = false
    const start = Date.now()
    const span: OpenSpan = {
      set: (more) => {
        for (const [key, value] of Object.entries(more)) {
          if (value !== undefined) attributes[key] = value
        }
      },
      fail: (errorType, message) => {
        attributes['error.type'] = errorType
        status = { code: 2, ...(message ? { message: message.slice(0, 500) } : {}) }
      },
      rename: (next) => {
        spanName = next
      },
      deferEnd: () => span.end,
      end: () => {
        if (ended) return
        ended = true
        batcher.add({
          traceId,
          spanId: context.spanId,
          ...(parent ? { parentSpanId: parent.spanId } : {}),
          name: spanName,
          kind: options.kind ?? 'internal',
          startTimeUnixNano: unixNano(start),
          endTimeUnixNano: unixNano(Date.now()),
          attributes: otlpAttributes(attributes),
          status,
        })
      },
    }
    return { context, span }
  }

  private scheduleMetrics(): void {
    if (!this.metricExporter) return
    this.cancelMetricTimer = backgroundTimer(this.settings.metricIntervalMs, () => {
      void this.exportMetrics().finally(() => {
        if (this.cancelMetricTimer) this.scheduleMetrics()
      })
    })
  }

  private async exportMetrics(): Promise<void> {
    if (!this.metricExporter || this.metrics.empty) return
    await this.metricExporter.send(this.metrics.exportRequest(this.resource, Date.now()))
  }
}

function errorTypeOf(error: unknown): string {
  if (isTurnlineError(error)) return error.code
  return error instanceof Error ? error.name : 'Error'
}

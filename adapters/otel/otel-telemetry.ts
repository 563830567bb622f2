import type { Context } from '@opentelemetry/api'
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
} from '../../src/ports/telemetry.ts'
import { backgroundTimer } from './background-timer.ts'
import { MetricStore } from './metric-store.ts'
import { type ExportFailureLog, type OtlpEndpoint, OtlpExporter } from './otlp-exporter.ts'
import { type OtlpKeyValue, otlpAttributes } from './otlp-json.ts'
import {
  type BatchLimits,
  type OtelSdk,
  type SamplerConfig,
  SdkTracing,
  type TracesEndpoint,
} from './sdk-tracing.ts'

/** What the OTEL_* variables configure (functions/telemetry-env.ts reads them). */
export interface OtelSettings {
  /** Absent: no traces (OTEL_TRACES_EXPORTER=none). */
  traces?: TracesEndpoint
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
 * Telemetry exported over OTLP/HTTP (JSON) to the collector the OTEL_* variables name: spans
 * through the OpenTelemetry SDK (sdk-tracing.ts), metrics aggregated here (metric-store.ts). The
 * current span's context lives in the runtime's async context, so spans opened below a request
 * — a tool call, a storage call, a model request — nest under it, and calls out carry its
 * `traceparent`.
 */
export class OtelTelemetry implements Telemetry {
  readonly enabled = true
  readonly captureContent: boolean
  private readonly tracing: SdkTracing | undefined
  private readonly metrics: MetricStore
  private readonly metricExporter: OtlpExporter | undefined
  private readonly resource: OtlpKeyValue[]
  private cancelMetricTimer: (() => void) | undefined

  constructor(
    private readonly settings: OtelSettings,
    private readonly storage: ContextStorage<Context>,
    fetchImpl: typeof fetch,
    log: ExportFailureLog,
    /** The SDK spans are made with (loadOtelSdk()); needed when the settings have traces. */
    sdk: OtelSdk | undefined,
  ) {
    this.captureContent = settings.captureContent
    this.resource = otlpAttributes(settings.resource)
    if (settings.traces && !sdk) throw new Error('traces need the OpenTelemetry SDK loaded')
    this.tracing =
      settings.traces && sdk
        ? new SdkTracing(
            {
              endpoint: settings.traces,
              resource: settings.resource,
              sampler: settings.sampler,
              batch: settings.batch,
            },
            log,
            sdk,
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
    if (!this.tracing) return run(NO_SPAN)
    const { context, span } = this.tracing.open(name, options, this.storage.getStore())
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
    return this.tracing?.open(name, options, this.storage.getStore()).span ?? NO_SPAN
  }

  record(name: HistogramName, value: number, attributes: TelemetryAttributes): void {
    if (this.metricExporter) this.metrics.record(name, value, attributes)
  }

  count(name: CounterName, value: number, attributes: TelemetryAttributes): void {
    if (this.metricExporter) this.metrics.count(name, value, attributes)
  }

  /** The W3C trace context headers of the current span, for a call out (none outside a trace). */
  propagationHeaders(): Record<string, string> {
    return this.tracing?.headersOf(this.storage.getStore()) ?? {}
  }

  /** Sends every finished span and the metrics now, and waits for the exports to end. */
  async flush(): Promise<void> {
    await Promise.all([this.tracing?.flush(), this.exportMetrics()])
  }

  /** The final flush: no more timers. */
  async shutdown(): Promise<void> {
    this.cancelMetricTimer?.()
    this.cancelMetricTimer = undefined
    await Promise.all([this.tracing?.shutdown(), this.exportMetrics()])
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

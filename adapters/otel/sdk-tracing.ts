import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base'
import type {
  OpenSpan,
  SpanKind as PortSpanKind,
  SpanOptions,
  TelemetryAttributes,
} from '../../src/ports/telemetry.ts'
import type { ExportFailureLog, OtlpEndpoint } from './otlp-exporter.ts'

/** OTEL_TRACES_SAMPLER's values (the spec's built-in samplers, which the SDK implements). */
export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio'

export interface SamplerConfig {
  name: SamplerName
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers (0…1, default 1). */
  ratio: number
}

export interface BatchLimits {
  /** OTEL_BSP_SCHEDULE_DELAY: how long a finished span may wait for its batch (ms). */
  scheduleDelayMs: number
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans kept while waiting; more are dropped. */
  maxQueueSize: number
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per export request. */
  maxExportBatchSize: number
}

/** Where spans go, and in which OTLP/HTTP encoding (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL). */
export interface TracesEndpoint extends OtlpEndpoint {
  protocol: 'http/protobuf' | 'http/json'
}

export interface TracingSettings {
  endpoint: TracesEndpoint
  resource: TelemetryAttributes
  sampler: SamplerConfig
  batch: BatchLimits
}

const KIND: Record<PortSpanKind, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
}

const propagator = new W3CTraceContextPropagator()

/**
 * Spans on the OpenTelemetry SDK (`@opentelemetry/sdk-trace-base`): its tracer, samplers and
 * batch span processor, and an official OTLP/HTTP exporter — protobuf
 * (`@opentelemetry/exporter-trace-otlp-proto`) or JSON (`…-otlp-http`), each on Node's `http` on
 * Node and Lambda and Deno, and on `fetch` in its Web build on workerd. Nothing is
 * registered globally: the current context is the caller's business (an async context), so
 * another OpenTelemetry user in the same process is left alone.
 */
export class SdkTracing {
  private readonly provider: BasicTracerProvider
  private readonly tracer

  constructor(settings: TracingSettings, log: ExportFailureLog) {
    this.provider = new BasicTracerProvider({
      resource: defaultResource().merge(resourceFromAttributes(definedOnly(settings.resource))),
      sampler: samplerOf(settings.sampler),
      spanProcessors: [
        new BatchSpanProcessor(
          loggedExporter(exporterOf(settings.endpoint), settings.endpoint.url, log),
          {
            scheduledDelayMillis: settings.batch.scheduleDelayMs,
            maxQueueSize: settings.batch.maxQueueSize,
            maxExportBatchSize: settings.batch.maxExportBatchSize,
            exportTimeoutMillis: settings.endpoint.timeoutMs,
          },
        ),
      ],
    })
    this.tracer = this.provider.getTracer('turnline', '0.1.0')
  }

  /**
   * A new span, a child of `current` (or, for a server span, of the caller's `traceparent`),
   * and the context it is current in. An unsampled span records nothing, but its context is
   * still passed on (the caller's decision travels with the trace).
   */
  open(
    name: string,
    options: SpanOptions,
    current: Context | undefined,
  ): { context: Context; span: OpenSpan } {
    const parent =
      options.kind === 'server'
        ? propagator.extract(
            ROOT_CONTEXT,
            { traceparent: options.remoteParent ?? '' },
            defaultTextMapGetter,
          )
        : (current ?? ROOT_CONTEXT)
    const sdkSpan = this.tracer.startSpan(
      name,
      { kind: KIND[options.kind ?? 'internal'], attributes: definedOnly(options.attributes) },
      parent,
    )
    return { context: trace.setSpan(parent, sdkSpan), span: portSpan(sdkSpan) }
  }

  /** The W3C trace context headers of `context`'s span, for a call out. */
  headersOf(context: Context | undefined): Record<string, string> {
    const headers: Record<string, string> = {}
    if (context) propagator.inject(context, headers, defaultTextMapSetter)
    return headers
  }

  /** Exports every finished span now and waits for the export. */
  flush(): Promise<void> {
    return this.provider.forceFlush()
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown()
  }
}

function portSpan(span: Span): OpenSpan {
  if (!span.isRecording()) {
    return { set: () => {}, fail: () => {}, rename: () => {}, deferEnd: () => () => {}, end() {} }
  }
  const end = () => span.end()
  return {
    set: (attributes) => span.setAttributes(definedOnly(attributes)),
    fail: (errorType, message) => {
      span.setAttribute('error.type', errorType)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(message ? { message: message.slice(0, 500) } : {}),
      })
    },
    rename: (next) => span.updateName(next),
    deferEnd: () => end,
    end,
  }
}

/** The SDK's attribute values: no `undefined`, lists as mutable arrays. */
function definedOnly(attributes: TelemetryAttributes | undefined) {
  const out: Record<string, string | number | boolean | string[]> = {}
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value === undefined) continue
    out[key] = typeof value === 'object' ? [...value] : value
  }
  return out
}

function exporterOf(endpoint: TracesEndpoint): SpanExporter {
  const config = {
    url: endpoint.url,
    headers: { ...endpoint.headers },
    timeoutMillis: endpoint.timeoutMs,
  }
  return endpoint.protocol === 'http/json'
    ? new JsonTraceExporter(config)
    : new ProtobufTraceExporter(config)
}

function samplerOf(config: SamplerConfig): Sampler {
  const root =
    config.name === 'always_off' || config.name === 'parentbased_always_off'
      ? new AlwaysOffSampler()
      : config.name.endsWith('traceidratio')
        ? new TraceIdRatioBasedSampler(config.ratio)
        : new AlwaysOnSampler()
  return config.name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

/**
 * A failed export is dropped by the processor (telemetry never holds a turn up) and logged
 * once until an export succeeds again, so a collector that is down does not flood the log.
 */
function loggedExporter(inner: SpanExporter, url: string, log: ExportFailureLog): SpanExporter {
  let failing = false
  return {
    export: (spans, done) =>
      inner.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          failing = false
        } else if (!failing) {
          failing = true
          log({
            ts: new Date().toISOString(),
            level: 'warn',
            msg: 'telemetry export failed',
            url,
            error: result.error?.message ?? 'export failed',
          })
        }
        done(result)
      }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  }
}

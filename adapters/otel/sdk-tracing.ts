import type { Context, Span, SpanKind } from '@opentelemetry/api'
import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import type {
  OpenSpan,
  SpanKind as PortSpanKind,
  SpanOptions,
  TelemetryAttributes,
} from '../../src/ports/telemetry.ts'
import { redactCredentials } from '../../src/shared/redact-credentials.ts'
import { shownUrl } from '../../src/shared/shown-url.ts'
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

/** The encodings of OTLP/HTTP (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL); protobuf is the spec's default. */
export type TraceProtocol = 'http/protobuf' | 'http/json'

/** Where spans go, and in which encoding. */
export interface TracesEndpoint extends OtlpEndpoint {
  protocol: TraceProtocol
}

export interface TracingSettings {
  endpoint: TracesEndpoint
  resource: TelemetryAttributes
  sampler: SamplerConfig
  batch: BatchLimits
}

/**
 * The OpenTelemetry packages spans are made with, imported when tracing is configured and not
 * before: loading them costs ≈ 0.1 s of CPU, which a start without OTEL_* does not pay. (A
 * dynamic import keeps them out of the start in the Node build too, where packages stay imports
 * that a bundle would otherwise hoist to its top.)
 */
export interface OtelSdk {
  api: typeof import('@opentelemetry/api')
  core: typeof import('@opentelemetry/core')
  /** The official exporter of the configured encoding (only that one is imported). */
  exporter:
    | typeof import('@opentelemetry/exporter-trace-otlp-proto')
    | typeof import('@opentelemetry/exporter-trace-otlp-http')
  resources: typeof import('@opentelemetry/resources')
  base: typeof import('@opentelemetry/sdk-trace-base')
}

export async function loadOtelSdk(protocol: TraceProtocol = 'http/protobuf'): Promise<OtelSdk> {
  const [api, core, exporter, resources, base] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ])
  return { api, core, exporter, resources, base }
}

/**
 * Spans on the OpenTelemetry SDK (`@opentelemetry/sdk-trace-base`): its tracer, samplers and
 * batch span processor, and an official OTLP/HTTP exporter — protobuf
 * (`@opentelemetry/exporter-trace-otlp-proto`) or JSON (`…-otlp-http`), each on Node's `http` on
 * Node and Lambda and Deno, and on `fetch` in its Web build on workerd. Nothing is
 * registered globally: the current context is the caller's business (an async context), so
 * another OpenTelemetry user in the same process is left alone.
 */
export class SdkTracing {
  private readonly provider
  private readonly tracer
  private readonly propagator
  private readonly kinds: Record<PortSpanKind, SpanKind>

  constructor(
    settings: TracingSettings,
    log: ExportFailureLog,
    private readonly sdk: OtelSdk,
  ) {
    const { SpanKind } = sdk.api
    this.kinds = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT }
    this.propagator = new sdk.core.W3CTraceContextPropagator()
    const { defaultResource, resourceFromAttributes } = sdk.resources
    this.provider = new sdk.base.BasicTracerProvider({
      resource: defaultResource().merge(resourceFromAttributes(definedOnly(settings.resource))),
      sampler: samplerOf(settings.sampler, sdk),
      spanProcessors: [
        new sdk.base.BatchSpanProcessor(
          loggedExporter(
            new sdk.exporter.OTLPTraceExporter({
              url: settings.endpoint.url,
              headers: { ...settings.endpoint.headers },
              timeoutMillis: settings.endpoint.timeoutMs,
            }),
            settings.endpoint.url,
            log,
            sdk,
          ),
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
    const { ROOT_CONTEXT, defaultTextMapGetter, trace } = this.sdk.api
    const parent =
      options.kind === 'server'
        ? this.propagator.extract(
            ROOT_CONTEXT,
            { traceparent: options.remoteParent ?? '' },
            defaultTextMapGetter,
          )
        : (current ?? ROOT_CONTEXT)
    const sdkSpan = this.tracer.startSpan(
      name,
      { kind: this.kinds[options.kind ?? 'internal'], attributes: definedOnly(options.attributes) },
      parent,
    )
    return { context: trace.setSpan(parent, sdkSpan), span: portSpan(sdkSpan, this.sdk) }
  }

  /** The W3C trace context headers of `context`'s span, for a call out. */
  headersOf(context: Context | undefined): Record<string, string> {
    const headers: Record<string, string> = {}
    if (context) this.propagator.inject(context, headers, this.sdk.api.defaultTextMapSetter)
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

function portSpan(span: Span, sdk: OtelSdk): OpenSpan {
  if (!span.isRecording()) {
    return { set: () => {}, fail: () => {}, rename: () => {}, deferEnd: () => () => {}, end() {} }
  }
  const end = () => span.end()
  return {
    set: (attributes) => span.setAttributes(definedOnly(attributes)),
    fail: (errorType, message) => {
      span.setAttribute('error.type', errorType)
      span.setStatus({
        code: sdk.api.SpanStatusCode.ERROR,
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

function samplerOf(config: SamplerConfig, sdk: OtelSdk) {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } =
    sdk.base
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
function loggedExporter(
  inner: SpanExporter,
  url: string,
  log: ExportFailureLog,
  sdk: OtelSdk,
): SpanExporter {
  let failing = false
  return {
    export: (spans, done) =>
      inner.export(spans, (result) => {
        if (result.code === sdk.core.ExportResultCode.SUCCESS) {
          failing = false
        } else if (!failing) {
          failing = true
          log({
            ts: new Date().toISOString(),
            level: 'warn',
            msg: 'telemetry export failed',
            url: shownUrl(url),
            error: redactCredentials(result.error?.message ?? 'export failed'),
          })
        }
        done(result)
      }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  }
}

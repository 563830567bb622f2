import * as z from 'zod'
import type { OtelSettings } from '../adapters/otel/otel-telemetry.ts'
import type { OtlpEndpoint } from '../adapters/otel/otlp-exporter.ts'
import { envFlag as flag, envInteger as integer } from '../src/contract/env-values.ts'

/**
 * The standard OpenTelemetry variables Turnline reads (docs/observability.md), spread into the
 * environment schema of env-config.ts. Nothing is exported unless an OTLP endpoint is set.
 */
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })

/** `key=value,key2=value2`, values percent-decoded (OTEL_EXPORTER_OTLP_HEADERS, …). */
const keyValues = z.string().transform((value, ctx) => {
  const out: Record<string, string> = {}
  for (const pair of value.split(',')) {
    if (pair.trim() === '') continue
    const at = pair.indexOf('=')
    if (at <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be a list of key=value pairs' })
      return z.NEVER
    }
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(
        pair.slice(at + 1).trim(),
      )
    } catch {
      ctx.addIssue({ code: 'custom', message: 'has a malformed percent-encoding' })
      return z.NEVER
    }
  }
  return out
})

const protocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'Turnline exports OTLP over HTTP: set http/protobuf or http/json, or leave it unset',
})
const metricsProtocol = z.enum(['http/json'], {
  error: 'Turnline sends metrics as OTLP/HTTP JSON only: set http/json or leave it unset',
})
const exporter = z.enum(['otlp', 'none'], { error: 'must be otlp or none' })

export const TelemetryEnvShape = {
  OTEL_SDK_DISABLED: flag.optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url.optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: url.optional(),
  OTEL_EXPORTER_OTLP_HEADERS: keyValues.optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValues.optional(),
  OTEL_EXPORTER_OTLP_METRICS_HEADERS: keyValues.optional(),
  OTEL_EXPORTER_OTLP_TIMEOUT: integer(1, 600_000).default(10_000),
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol.optional(),
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: metricsProtocol.optional(),
  OTEL_TRACES_EXPORTER: exporter.optional(),
  OTEL_METRICS_EXPORTER: exporter.optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(200).optional(),
  OTEL_RESOURCE_ATTRIBUTES: keyValues.optional(),
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_BSP_SCHEDULE_DELAY: integer(1, 3_600_000).default(5000),
  OTEL_BSP_MAX_QUEUE_SIZE: integer(1, 1_000_000).default(2048),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: integer(1, 1_000_000).default(512),
  OTEL_METRIC_EXPORT_INTERVAL: integer(1, 86_400_000).default(60_000),
  /** Prompt and completion content on model spans (opt-in, as the GenAI conventions say). */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: flag.default(false),
}

type TelemetryEnv = z.output<z.ZodObject<typeof TelemetryEnvShape>>

/** The exporter settings the OTEL_* variables give; undefined when nothing is to be exported. */
export function otelSettingsOf(env: TelemetryEnv, version: string): OtelSettings | undefined {
  if (env.OTEL_SDK_DISABLED) return undefined
  const traces =
    env.OTEL_TRACES_EXPORTER === 'none'
      ? undefined
      : endpointOf(
          env,
          env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
          'traces',
          env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
        )
  const metrics =
    env.OTEL_METRICS_EXPORTER === 'none'
      ? undefined
      : endpointOf(
          env,
          env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
          'metrics',
          env.OTEL_EXPORTER_OTLP_METRICS_HEADERS,
        )
  if (!traces && !metrics) return undefined
  return {
    ...(traces
      ? {
          traces: {
            ...traces,
            // The spec's default for OTLP/HTTP; metrics are JSON whatever the general variable says.
            protocol:
              env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
              env.OTEL_EXPORTER_OTLP_PROTOCOL ??
              'http/protobuf',
          },
        }
      : {}),
    ...(metrics ? { metrics } : {}),
    resource: {
      'service.version': version,
      // Cumulative metrics of two processes (or Worker isolates) must not read as one series.
      'service.instance.id': crypto.randomUUID(),
      ...env.OTEL_RESOURCE_ATTRIBUTES,
      'service.name':
        env.OTEL_SERVICE_NAME ?? env.OTEL_RESOURCE_ATTRIBUTES?.['service.name'] ?? 'turnline',
    },
    sampler: { name: env.OTEL_TRACES_SAMPLER, ratio: env.OTEL_TRACES_SAMPLER_ARG ?? 1 },
    batch: {
      scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY,
      maxQueueSize: env.OTEL_BSP_MAX_QUEUE_SIZE,
      maxExportBatchSize: Math.min(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, env.OTEL_BSP_MAX_QUEUE_SIZE),
    },
    metricIntervalMs: env.OTEL_METRIC_EXPORT_INTERVAL,
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
  }
}

/** The signal's own endpoint as given, else the base endpoint with `/v1/<signal>` appended. */
function endpointOf(
  env: TelemetryEnv,
  own: string | undefined,
  signal: 'traces' | 'metrics',
  ownHeaders: Record<string, string> | undefined,
): OtlpEndpoint | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  const target =
    own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/${signal}`)
  if (target === undefined) return undefined
  return {
    url: target,
    headers: { ...env.OTEL_EXPORTER_OTLP_HEADERS, ...ownHeaders },
    timeoutMs: env.OTEL_EXPORTER_OTLP_TIMEOUT,
  }
}

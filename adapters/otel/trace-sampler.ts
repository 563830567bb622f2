import type { SpanContext } from './trace-context.ts'

/** OTEL_TRACES_SAMPLER's values this exporter implements (the spec's built-in samplers). */
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

/**
 * Whether a new trace, or a span continuing a remote parent, is recorded. Children of a local
 * span always follow their parent; the `parentbased_*` samplers follow a remote parent too.
 */
export function sampled(
  config: SamplerConfig,
  traceId: string,
  remoteParent: SpanContext | undefined,
): boolean {
  if (remoteParent && config.name.startsWith('parentbased_')) return remoteParent.sampled
  switch (config.name) {
    case 'always_off':
    case 'parentbased_always_off':
      return false
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return ratioSampled(traceId, config.ratio)
    default:
      return true
  }
}

/** The spec's TraceIdRatioBased: the trace id's last 8 bytes below ratio × 2^64. */
function ratioSampled(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true
  if (ratio <= 0) return false
  const low = BigInt(`0x${traceId.slice(16)}`)
  return low < BigInt(Math.floor(ratio * 2 ** 53)) << 11n
}

import type { Context } from '@opentelemetry/api'
import { type ContextStorage, OtelTelemetry } from '../adapters/otel/otel-telemetry.ts'
import { loadOtelSdk } from '../adapters/otel/sdk-tracing.ts'
import { tracedCalls } from '../adapters/otel/traced-calls.ts'
import { tracedFetch } from '../adapters/otel/traced-fetch.ts'
import { type ModelEndpoint, tracedModelClient } from '../adapters/otel/traced-model-client.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { ModelApi, ModelClient } from '../src/ports/model-client.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { shownUrl } from '../src/shared/shown-url.ts'
import type { EnvConfig } from './env-config.ts'
import type { ModelChoice } from './model-choice.ts'
import { otelSettingsOf } from './telemetry-env.ts'

/** The runtime's async context (AsyncLocalStorage), made by the entries that have one. */
export type ContextStorageFactory = () => ContextStorage<Context>

/**
 * The deployment's telemetry from the OTEL_* variables (docs/observability.md): undefined when
 * nothing is to be exported, and then nothing is wrapped — a turn costs what it cost before.
 * The OpenTelemetry SDK is imported only when traces are exported (adapters/otel/sdk-tracing.ts,
 * loadOtelSdk): loading it costs ≈ 0.1 s of CPU, which a start without OTEL_* does not pay.
 */
export async function telemetryOf(
  config: EnvConfig,
  options: {
    contextStorage?: ContextStorageFactory | undefined
    log?: ((entry: Record<string, unknown>) => void) | undefined
  },
  fetchImpl: typeof fetch,
  version: string,
  notices: string[],
): Promise<OtelTelemetry | undefined> {
  const settings = otelSettingsOf(config, version)
  if (!settings) return undefined
  const storage = options.contextStorage?.()
  if (!storage) {
    notices.push(
      'telemetry: OTEL_* is set but this runtime has no async context (AsyncLocalStorage); ' +
        'nothing is exported',
    )
    return undefined
  }
  const log = options.log ?? ((entry) => console.warn(JSON.stringify(entry)))
  notices.push(
    `telemetry: ${[settings.traces && `traces to ${shownUrl(settings.traces.url)} (OTLP/HTTP ${settings.traces.protocol === 'http/json' ? 'JSON' : 'protobuf'})`, settings.metrics && `metrics to ${shownUrl(settings.metrics.url)} (OTLP/HTTP JSON)`].filter(Boolean).join(', ')}`,
  )
  const sdk = settings.traces ? await loadOtelSdk(settings.traces.protocol) : undefined
  return new OtelTelemetry(settings, storage, fetchImpl, log, sdk)
}

/** The backends and calls out, traced when telemetry is on (the same objects when it is off). */
export function traced(telemetry: OtelTelemetry | undefined) {
  return {
    store: (store: ObjectStore, kind: string): ObjectStore =>
      telemetry
        ? tracedCalls(store, telemetry, 'storage', { 'turnline.storage.kind': kind })
        : store,
    coordinator: (coordinator: Coordinator): Coordinator =>
      telemetry ? tracedCalls(coordinator, telemetry, 'coordinator', {}) : coordinator,
    fetch: (fetchImpl: typeof fetch): typeof fetch =>
      telemetry ? tracedFetch(fetchImpl, telemetry) : fetchImpl,
    model: (client: ModelClient, config: EnvConfig, choice: ModelChoice): ModelClient =>
      telemetry
        ? tracedModelClient(client, telemetry, (api) => modelEndpoint(api, config, choice))
        : client,
  }
}

function modelEndpoint(api: ModelApi, config: EnvConfig, choice: ModelChoice): ModelEndpoint {
  if (choice.provider === 'demo') return { provider: 'turnline.demo' }
  if (api === 'anthropic') {
    return {
      provider: 'anthropic',
      baseURL: config.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com',
    }
  }
  return { provider: 'openai', baseURL: config.OPENAI_BASE_URL ?? 'https://api.openai.com/v1' }
}

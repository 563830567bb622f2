import { AsyncLocalStorage } from 'node:async_hooks'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type OtelSettings, OtelTelemetry } from '../../adapters/otel/otel-telemetry.ts'
import { loadOtelSdk, type OtelSdk } from '../../adapters/otel/sdk-tracing.ts'
import { tracedModelClient } from '../../adapters/otel/traced-model-client.ts'
import { createDeps } from '../../functions/deps.ts'
import { ConfigError, parseEnv } from '../../functions/env-config.ts'
import { otelSettingsOf } from '../../functions/telemetry-env.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelClient, ModelRequest } from '../../src/ports/model-client.ts'
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts'

let otlp: OtlpReceiver
let sdk: OtelSdk
beforeAll(async () => {
  otlp = await startOtlpReceiver()
  sdk = await loadOtelSdk()
})
afterAll(() => otlp.close())
beforeEach(() => {
  otlp.spans.length = 0
})

function telemetry(overrides: Partial<OtelSettings> = {}) {
  return new OtelTelemetry(
    {
      traces: {
        url: `${otlp.url}/v1/traces`,
        headers: {},
        timeoutMs: 5000,
        protocol: 'http/protobuf',
      },
      resource: { 'service.name': 'unit' },
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      batch: { scheduleDelayMs: 60_000, maxQueueSize: 100, maxExportBatchSize: 50 },
      metricIntervalMs: 60_000,
      captureContent: false,
      ...overrides,
    },
    new AsyncLocalStorage(),
    fetch,
    () => {},
    sdk,
  )
}

const oneAnswer: ModelClient = {
  async *stream() {
    yield {
      type: 'completed',
      response: {
        text: 'hi there',
        toolCalls: [],
        usage: { ...ZERO_USAGE, input_tokens: 3 },
        stopReason: 'stop',
      },
    }
  },
}
const request: ModelRequest = {
  model: 'gpt-4o-mini',
  api: 'chat',
  messages: [{ role: 'user', content: 'secret prompt' }],
  tools: [],
}

async function drain(client: ModelClient) {
  for await (const _ of client.stream(request)) {
    // consumed
  }
}

describe('OpenTelemetry configuration', () => {
  it('exports nothing and wraps nothing when no OTLP endpoint is set', async () => {
    expect(otelSettingsOf(parseEnv({}), '0')).toBeUndefined()
    expect(
      otelSettingsOf(
        parseEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
        '0',
      ),
    ).toBeUndefined()
    const deps = await createDeps({ TURNLINE_STORE: 'memory', TURNLINE_LOG: 'off' })
    expect(deps.service.telemetry).toBeUndefined()
    expect(deps.http.telemetry).toBeUndefined()
  })

  it('reads the standard variables: base endpoint per signal, headers, resource, exporters', () => {
    const settings = otelSettingsOf(
      parseEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b,team=t',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://metrics:9000/custom',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod',
        OTEL_SERVICE_NAME: 'svc',
      }),
      '1.2.3',
    )
    expect(settings?.traces).toEqual({
      url: 'http://collector:4318/v1/traces',
      headers: { 'x-api-key': 'a b', team: 't' },
      timeoutMs: 10_000,
      protocol: 'http/protobuf',
    })
    expect(settings?.metrics?.url).toBe('http://metrics:9000/custom')
    expect(settings?.resource).toMatchObject({
      'service.name': 'svc',
      'service.version': '1.2.3',
      'deployment.environment.name': 'prod',
    })
    const noTraces = otelSettingsOf(
      parseEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
      '0',
    )
    expect(noTraces?.traces).toBeUndefined()
    expect(noTraces?.metrics?.url).toBe('http://c:4318/v1/metrics')
  })

  it('sends traces as protobuf unless JSON is asked for, and metrics as JSON', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }
    const json = otelSettingsOf(
      parseEnv({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
      '0',
    )
    expect(json?.traces?.protocol).toBe('http/json')
    const own = otelSettingsOf(
      parseEnv({
        ...endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
      '0',
    )
    expect(own?.traces?.protocol).toBe('http/protobuf')
    expect(() =>
      parseEnv({ ...endpoint, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf' }),
    ).toThrow(ConfigError)
  })

  it('refuses an encoding it does not send rather than failing every export', () => {
    expect(() =>
      parseEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toThrow(ConfigError)
  })
})

describe('OtelTelemetry', () => {
  it('nests spans by async context and continues a remote parent', async () => {
    const t = telemetry()
    await t.span(
      'root',
      { kind: 'server', remoteParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      async () => {
        await Promise.all([
          t.span('a', {}, async () => {
            await t.span('a.1', {}, async () => {})
          }),
          t.span('b', {}, async () => {}),
        ])
      },
    )
    await t.flush()
    const byName = new Map(otlp.spans.map((s) => [s.name, s]))
    const root = byName.get('root')
    expect(root?.traceId).toBe('0af7651916cd43dd8448eb211c80319c')
    expect(root?.parentSpanId).toBe('b7ad6b7169203331')
    expect(byName.get('a')?.parentSpanId).toBe(root?.spanId)
    expect(byName.get('b')?.parentSpanId).toBe(root?.spanId)
    expect(byName.get('a.1')?.parentSpanId).toBe(byName.get('a')?.spanId)
  })

  it('follows a caller that did not sample: nothing recorded, the context still passed on', async () => {
    const t = telemetry()
    let passed: string | undefined
    await t.span(
      'root',
      { kind: 'server', remoteParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00' },
      async () => {
        await t.span('child', {}, async () => {
          passed = t.propagationHeaders().traceparent
        })
      },
    )
    await t.flush()
    expect(otlp.spans).toEqual([])
    // The caller's trace goes on, unsampled (flags 00), from a span of its own.
    expect(passed).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/)
  })

  it('records a thrown error as the span status and rethrows it', async () => {
    const t = telemetry()
    await expect(
      t.span('boom', {}, async () => Promise.reject(new TypeError('bad'))),
    ).rejects.toThrow('bad')
    await t.flush()
    expect(otlp.spans[0]).toMatchObject({ name: 'boom', status: { code: 2, message: 'bad' } })
    expect(otlp.spans[0]?.attributes['error.type']).toBe('TypeError')
  })

  it('records prompt and completion content only when opted in', async () => {
    const plain = telemetry()
    await drain(tracedModelClient(oneAnswer, plain, () => ({ provider: 'openai' })))
    await plain.flush()
    expect(otlp.spans[0]?.name).toBe('chat gpt-4o-mini')
    expect(JSON.stringify(otlp.spans[0])).not.toContain('secret prompt')
    expect(JSON.stringify(otlp.spans[0])).not.toContain('hi there')
    otlp.spans.length = 0
    const opted = telemetry({ captureContent: true })
    await drain(tracedModelClient(oneAnswer, opted, () => ({ provider: 'openai' })))
    await opted.flush()
    expect(String(otlp.spans[0]?.attributes['gen_ai.input.messages'])).toContain('secret prompt')
    expect(String(otlp.spans[0]?.attributes['gen_ai.output.messages'])).toContain('hi there')
  })
})

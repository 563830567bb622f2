import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts'
import { runTracedTurn, startTracedTool, TRACED_MODEL } from '../support/turn-trace.ts'
import { until } from '../support/until.ts'

/**
 * OpenTelemetry end to end: `npm start` with the standard OTEL_* variables pointed at a real
 * OTLP/HTTP receiver, traces in the default protobuf encoding. A turn with a tool call, started with the caller's `traceparent`, arrives
 * as one trace under the caller's span (test/support/turn-trace.ts has what it must hold; the
 * workerd test checks the same), and the metrics arrive.
 */
let dir: string
let mock: MockOpenAI
let otlp: OtlpReceiver
let tool: Awaited<ReturnType<typeof startTracedTool>>
let server: NodeEntry
let url: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-telemetry-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  otlp = await startOtlpReceiver()
  tool = await startTracedTool()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_API_KEY: 'sk-telemetry',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: TRACED_MODEL,
    TURNLINE_LOG: 'off',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_SERVICE_NAME: 'turnline-telemetry-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_METRIC_EXPORT_INTERVAL: '100',
  })
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await tool?.close()
  await otlp?.close()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('OpenTelemetry through npm start', () => {
  it('exports a turn with a tool call as one trace under the caller span, with GenAI attributes', async () => {
    // No OTEL_EXPORTER_OTLP_PROTOCOL: the spec's default, http/protobuf.
    await runTracedTurn(url, {
      mock,
      otlp,
      tool,
      serviceName: 'turnline-telemetry-test',
      encoding: 'protobuf',
    })
  })

  it('exports the token, model-duration, turn and request metrics', async () => {
    const metrics = await until('the metrics', () =>
      otlp.metrics.has('gen_ai.client.token.usage') &&
      otlp.metrics.has('turnline.turn.duration') &&
      otlp.metrics.has('http.server.request.duration')
        ? otlp.metrics
        : undefined,
    )
    const tokens = metrics.get('gen_ai.client.token.usage')?.histogram?.dataPoints ?? []
    const input = tokens.find((p) => p.attributes['gen_ai.token.type'] === 'input')
    const output = tokens.find((p) => p.attributes['gen_ai.token.type'] === 'output')
    expect(input).toMatchObject({ count: 2, sum: 270 })
    expect(output).toMatchObject({ count: 2, sum: 19 })
    expect(input?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
    })
    const durations = metrics.get('gen_ai.client.operation.duration')?.histogram?.dataPoints ?? []
    expect(durations.reduce((n, p) => n + p.count, 0)).toBe(2)
    expect(metrics.get('gen_ai.client.operation.duration')?.unit).toBe('s')
    const turns = metrics.get('turnline.turn.duration')?.histogram?.dataPoints ?? []
    expect(turns.find((p) => p.attributes['turnline.turn.status'] === 'completed')).toMatchObject({
      count: 1,
    })
    const requests = metrics.get('http.server.request.duration')?.histogram?.dataPoints ?? []
    expect(
      requests.find(
        (p) =>
          p.attributes['http.route'] === '/v1/sessions/:id/turns' &&
          p.attributes['http.response.status_code'] === 200,
      ),
    ).toMatchObject({ count: 1 })
  })

  it("a refused key: the chat span keeps the provider's words, the key redacted", async () => {
    const message = 'Incorrect API key provided: sk-tele****WXYZ. You can find your API key at …'
    mock.enqueue({ status: 401, code: 'invalid_api_key', message })
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const { session_id: id } = (await (await post('/v1/sessions', {})).json()) as {
      session_id: string
    }
    const turn = (await (await post(`/v1/sessions/${id}/turns`, { input: 'hi' })).json()) as {
      status: string
    }
    expect(turn.status).toBe('failed')
    const span = await until('the failed chat span', () =>
      otlp.spans.find((s) => s.name.startsWith('chat ') && s.status.code === 2),
    )
    expect(span.status.message).toContain('auth (HTTP 401)')
    expect(span.status.message).toContain('provider: 401 Incorrect API key provided: [redacted].')
    expect(span.status.message).not.toContain('WXYZ')
  })
})

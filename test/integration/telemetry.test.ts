import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { echoTool } from '../support/engine-deps.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../support/otlp-receiver.ts'
import { until } from '../support/until.ts'

/**
 * OpenTelemetry end to end: `npm start` with the standard OTEL_* variables pointed at a real
 * OTLP/HTTP receiver. A turn with a tool call, started with the caller's `traceparent`, arrives
 * as one trace under the caller's span — request, `invoke_agent`, `chat <model>` per model
 * request, `execute_tool <name>`, storage and coordinator calls — with the GenAI attributes; the
 * tool's endpoint receives the trace context; and the metrics arrive.
 */
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'

let dir: string
let mock: MockOpenAI
let otlp: OtlpReceiver
let tool: RunningServer
const toolHeaders: Record<string, string>[] = []
let server: NodeEntry
let url: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-telemetry-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  otlp = await startOtlpReceiver()
  const toolApp = new Hono()
  toolApp.post('/tool', (c) => {
    toolHeaders.push(Object.fromEntries(c.req.raw.headers))
    return c.json({ found: 'yes' })
  })
  tool = await serveApp(toolApp)
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_API_KEY: 'sk-telemetry',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
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

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  expect(res.status, path).toBeLessThan(300)
  return (await res.json()) as Record<string, unknown>
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name)

describe('OpenTelemetry through npm start', () => {
  it('exports a turn with a tool call as one trace under the caller span, with GenAI attributes', async () => {
    const created = await post('/v1/sessions', { tools: [echoTool(`${tool.url}/tool`)] })
    const id = created.session_id as string
    mock.enqueue(
      {
        toolCalls: [{ id: 'call_lookup_1', name: 'lookup', arguments: '{"q":"otel"}' }],
        usage: {
          input_tokens: 120,
          cached_input_tokens: 64,
          output_tokens: 12,
          reasoning_tokens: 5,
        },
      },
      { text: 'found it', usage: { input_tokens: 150, output_tokens: 7 } },
    )
    const turn = await post(
      `/v1/sessions/${id}/turns`,
      { input: 'look up otel' },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    )
    expect(turn.status).toBe('completed')

    const trace = () => otlp.spans.filter((span) => span.traceId === TRACE_ID)
    await until('the turn request span', () =>
      named(trace(), 'POST /v1/sessions/:id/turns').length === 1 ? true : undefined,
    )
    const spans = trace()
    const byId = new Map(spans.map((span) => [span.spanId, span]))
    const request = named(spans, 'POST /v1/sessions/:id/turns')[0] as ReceivedSpan
    expect(request.parentSpanId).toBe(CALLER_SPAN)
    expect(request.kind).toBe(2)
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/sessions/:id/turns',
      'http.response.status_code': 200,
    })
    expect(request.resource['service.name']).toBe('turnline-telemetry-test')

    const agent = named(spans, 'invoke_agent')
    expect(agent).toHaveLength(1)
    const invoke = agent[0] as ReceivedSpan
    expect(invoke.parentSpanId).toBe(request.spanId)
    expect(invoke.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': id,
      'turnline.turn.status': 'completed',
      'turnline.turn.model_calls': 2,
    })

    const chats = named(spans, 'chat gpt-4o-mini')
    expect(chats).toHaveLength(2)
    for (const chat of chats) expect(chat.parentSpanId).toBe(invoke.spanId)
    const first = chats.find((chat) => chat.attributes['gen_ai.usage.input_tokens'] === 120)
    expect(first?.kind).toBe(3)
    expect(first?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': expect.any(String),
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.usage.cache_read.input_tokens': 64,
      'gen_ai.usage.reasoning.output_tokens': 5,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(mock.baseURL).port),
    })
    // Prompt and completion content are off unless opted in.
    for (const chat of chats) {
      expect(chat.attributes).not.toHaveProperty('gen_ai.input.messages')
      expect(chat.attributes).not.toHaveProperty('gen_ai.output.messages')
    }

    const tools = named(spans, 'execute_tool lookup')
    expect(tools).toHaveLength(1)
    const toolSpan = tools[0] as ReceivedSpan
    expect(toolSpan.parentSpanId).toBe(invoke.spanId)
    expect(toolSpan.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call_lookup_1',
      'gen_ai.tool.type': 'function',
      'turnline.tool.status': 'completed',
    })
    // The tool's endpoint continues the same trace, from the tool call's span.
    expect(toolHeaders.at(-1)?.traceparent).toBe(`00-${TRACE_ID}-${toolSpan.spanId}-01`)

    // Storage and coordinator calls of the turn are in the trace, below the turn.
    const storage = spans.filter((span) => span.name.startsWith('storage '))
    const coordinator = spans.filter((span) => span.name.startsWith('coordinator '))
    expect(storage.map((span) => span.name)).toContain('storage put')
    expect(coordinator.map((span) => span.name)).toContain('coordinator beginTurn')
    for (const span of [...storage, ...coordinator]) {
      expect(byId.has(span.parentSpanId ?? ''), span.name).toBe(true)
    }
    expect(otlp.rejected).toEqual([])
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
})

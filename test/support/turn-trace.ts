import { Hono } from 'hono'
import { expect } from 'vitest'
import { echoTool } from './engine-deps.ts'
import { type RunningServer, serveApp } from './http-server.ts'
import type { MockOpenAI } from './mock-openai.ts'
import type { OtlpReceiver, ReceivedSpan } from './otlp-receiver.ts'
import { until } from './until.ts'

/**
 * The traced turn every runtime's telemetry test runs: a turn with a tool call, started under
 * the caller's `traceparent`, must reach the OTLP receiver as one trace under the caller's span
 * — request, `invoke_agent`, `chat <model>` per model request, `execute_tool <name>`, storage
 * and coordinator calls — with the GenAI attributes, and the tool's endpoint must receive the
 * trace context of its `execute_tool` span.
 */
export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
export const CALLER_SPAN = '00f067aa0ba902b7'
export const TRACED_MODEL = 'gpt-4o-mini'

export type TracedTool = RunningServer & { headers: Record<string, string>[] }

/** The HTTP tool's endpoint: answers, and keeps the headers of every call. */
export async function startTracedTool(): Promise<TracedTool> {
  const headers: Record<string, string>[] = []
  const app = new Hono()
  app.post('/tool', (c) => {
    headers.push(Object.fromEntries(c.req.raw.headers))
    return c.json({ found: 'yes' })
  })
  return Object.assign(await serveApp(app), { headers })
}

/** The model's two answers: a tool call, then text, with the usage the assertions expect. */
function enqueueToolTurn(mock: MockOpenAI): void {
  mock.enqueue(
    {
      toolCalls: [{ id: 'call_lookup_1', name: 'lookup', arguments: '{"q":"otel"}' }],
      usage: { input_tokens: 120, cached_input_tokens: 64, output_tokens: 12, reasoning_tokens: 5 },
    },
    { text: 'found it', usage: { input_tokens: 150, output_tokens: 7 } },
  )
}

/**
 * Creates a session with the tool at `baseUrl` (a running server), runs the turn under the
 * caller's `traceparent`, and checks the trace that reaches `otlp`.
 */
export async function runTracedTurn(
  baseUrl: string,
  parts: {
    mock: MockOpenAI
    otlp: OtlpReceiver
    tool: TracedTool
    serviceName: string
    /** The OTLP/HTTP encoding every trace export must have come in. */
    encoding: 'protobuf' | 'json'
  },
): Promise<void> {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await res.text()
    expect(res.status, `${path}: ${text}`).toBeLessThan(300)
    return JSON.parse(text) as Record<string, unknown>
  }
  const created = await post('/v1/sessions', { tools: [echoTool(`${parts.tool.url}/tool`)] })
  const id = created.session_id as string
  enqueueToolTurn(parts.mock)
  const turn = await post(
    `/v1/sessions/${id}/turns`,
    { input: 'look up otel' },
    { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
  )
  expect(turn.status).toBe('completed')
  await expectTurnTrace(parts.otlp, {
    sessionId: id,
    serviceName: parts.serviceName,
    modelPort: Number(new URL(parts.mock.baseURL).port),
    toolHeaders: parts.tool.headers,
  })
  expect(new Set(parts.otlp.traceEncodings)).toEqual(new Set([parts.encoding]))
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name)

/** The one span called `name`, a child of `parent`. */
function onlyChild(spans: ReceivedSpan[], name: string, parent: ReceivedSpan): ReceivedSpan {
  const found = named(spans, name)
  expect(found, name).toHaveLength(1)
  const span = found[0] as ReceivedSpan
  expect(span.parentSpanId, name).toBe(parent.spanId)
  return span
}

/** Waits for the turn's trace and checks its tree and attributes. */
async function expectTurnTrace(
  otlp: OtlpReceiver,
  expected: {
    sessionId: string
    serviceName: string
    modelPort: number
    toolHeaders: Record<string, string>[]
  },
): Promise<void> {
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
  expect(request.resource['service.name']).toBe(expected.serviceName)
  expect(request.scope.name).toBe('turnline')

  const invoke = onlyChild(spans, 'invoke_agent', request)
  expect(invoke.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.conversation.id': expected.sessionId,
    'turnline.turn.status': 'completed',
    'turnline.turn.model_calls': 2,
  })

  const chats = named(spans, `chat ${TRACED_MODEL}`)
  expect(chats).toHaveLength(2)
  for (const chat of chats) expect(chat.parentSpanId).toBe(invoke.spanId)
  const first = chats.find((chat) => chat.attributes['gen_ai.usage.input_tokens'] === 120)
  expect(first?.kind).toBe(3)
  expect(first?.attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': TRACED_MODEL,
    'gen_ai.response.model': expect.any(String),
    'gen_ai.usage.output_tokens': 12,
    'gen_ai.usage.cache_read.input_tokens': 64,
    'gen_ai.usage.reasoning.output_tokens': 5,
    'gen_ai.response.finish_reasons': ['tool_calls'],
    'server.address': '127.0.0.1',
    'server.port': expected.modelPort,
  })
  // Prompt and completion content are off unless opted in.
  for (const chat of chats) {
    expect(chat.attributes).not.toHaveProperty('gen_ai.input.messages')
    expect(chat.attributes).not.toHaveProperty('gen_ai.output.messages')
  }

  const toolSpan = onlyChild(spans, 'execute_tool lookup', invoke)
  expect(toolSpan.attributes).toMatchObject({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'lookup',
    'gen_ai.tool.call.id': 'call_lookup_1',
    'gen_ai.tool.type': 'function',
    'turnline.tool.status': 'completed',
  })
  // The tool's endpoint continues the same trace, from the tool call's span.
  expect(expected.toolHeaders.at(-1)?.traceparent).toBe(`00-${TRACE_ID}-${toolSpan.spanId}-01`)

  // Storage and coordinator calls of the turn are in the trace, below the turn.
  const storage = spans.filter((span) => span.name.startsWith('storage '))
  const coordinator = spans.filter((span) => span.name.startsWith('coordinator '))
  expect(storage.map((span) => span.name)).toContain('storage put')
  expect(coordinator.map((span) => span.name)).toContain('coordinator beginTurn')
  for (const span of [...storage, ...coordinator]) {
    expect(byId.has(span.parentSpanId ?? ''), span.name).toBe(true)
  }
  expect(otlp.rejected).toEqual([])
}

import { createHmac, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { echoTool } from '../support/engine-harness.ts'
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { parseSse } from '../support/sse-frames.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * The smoke scenario every runtime entry must pass, over real HTTP against the runtime's own
 * process: create a session, a scripted text turn and its idempotent replay, a turn calling a
 * session-defined HTTP tool (signed, served by a local receiver) streamed as SSE, the canonical
 * events as NDJSON, then complete.
 */
export type StartRuntime = (vars: Record<string, string>) => Promise<RuntimeProcess>

const TOOL_SECRET = 'runtime-smoke-tool-secret'
const MODEL = 'gpt-4o-mini'

interface TurnBody {
  turn_id: string
  status: string
  events: ThreadEvent[]
  next_seq: number
}
interface FramedEvent {
  seq: number
  schema_version: string
  event: ThreadEvent
}

const types = (events: ThreadEvent[]) =>
  events.map((e) => ('item' in e ? `${e.type}:${e.item.type}` : e.type))

export function smokeScenario(name: string, start: StartRuntime): void {
  describe(`${name}: the app in its real runtime`, () => {
    let mock: MockOpenAI | undefined
    let receiver: Awaited<ReturnType<typeof startToolReceiver>> | undefined
    let runtime: RuntimeProcess | undefined
    let mcp: TestMcpServer | undefined

    beforeAll(async () => {
      mock = await startMockOpenAI()
      mcp = await startMcpServer()
      // The receiver holds only its tenant's secret: HMAC-SHA256(TURNLINE_TOOL_SECRET, tenant).
      const tenantSecret = createHmac('sha256', TOOL_SECRET).update('local').digest('hex')
      receiver = await startToolReceiver(tenantSecret)
      runtime = await start({
        // Tenant `local`, unauthenticated: asked for explicitly, as for a local run.
        TURNLINE_SINGLE_TENANT: '1',
        OPENAI_BASE_URL: mock.baseURL,
        OPENAI_API_KEY: 'test-key',
        TURNLINE_MODEL: MODEL,
        TURNLINE_TOOL_ALLOWED_HOSTS: `${receiver.host},${new URL(mcp.url).host}`,
        TURNLINE_TOOL_SECRET: TOOL_SECRET,
      })
    })
    afterAll(async () => {
      await runtime?.stop()
      await mcp?.close()
      await mock?.close()
      await receiver?.close()
    })

    async function call(method: string, path: string, body?: unknown, headers = {}) {
      if (!runtime) throw new Error(`${name} is not running`)
      return fetch(`${runtime.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(15_000),
      })
    }
    async function json<T>(response: Response, status: number): Promise<T> {
      const text = await response.text()
      if (response.status !== status) {
        throw new Error(
          `expected ${status}, got ${response.status}: ${text}\n--- ${name} output ---\n` +
            (runtime?.output() ?? ''),
        )
      }
      return JSON.parse(text) as T
    }

    it('creates a session, steps a text turn and a streamed tool turn, serves NDJSON, completes', async () => {
      if (!mock || !receiver) throw new Error('setup failed')
      const created = await json<{ session_id: string; thread_id: string; status: string }>(
        await call('POST', '/v1/sessions', {
          instructions: 'Be brief.',
          tools: [echoTool(receiver.url)],
        }),
        201,
      )
      expect(created.status).toBe('active')
      const id = created.session_id

      mock.enqueue({ text: 'Hello from the model.', usage: { input_tokens: 12, output_tokens: 5 } })
      const key = { 'idempotency-key': randomUUID() }
      const first = await json<TurnBody>(
        await call('POST', `/v1/sessions/${id}/turns`, { input: 'Hi' }, key),
        200,
      )
      expect(first.status).toBe('completed')
      expect(types(first.events)).toEqual([
        'turn.started',
        'item.started:agent_message',
        'item.completed:agent_message',
        'turn.completed',
      ])
      expect(first.events[2]).toMatchObject({ item: { text: 'Hello from the model.' } })
      // A retry with the same key replays the outcome; the model is not asked again.
      const replay = await json<TurnBody>(
        await call('POST', `/v1/sessions/${id}/turns`, { input: 'Hi' }, key),
        200,
      )
      expect(replay).toEqual(first)
      expect(mock.requests).toHaveLength(1)

      mock.enqueue(
        {
          toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"weather"}' }],
          usage: { input_tokens: 30, output_tokens: 6 },
        },
        { text: 'It is sunny.', usage: { input_tokens: 50, output_tokens: 4 } },
      )
      // The tool turn streams live (SSE): one frame per event, id = seq, then the result.
      const streamed = await call(
        'POST',
        `/v1/sessions/${id}/turns`,
        { input: 'Weather?' },
        { accept: 'text/event-stream' },
      )
      expect(streamed.status).toBe(200)
      expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const { frames } = parseSse(await streamed.text())
      const result = frames.at(-1)
      expect(result?.event).toBe('turn.result')
      const second = JSON.parse(result?.data ?? '{}') as TurnBody
      const live = frames.slice(0, -1)
      expect(live.map((f) => JSON.parse(f.data))).toEqual(second.events)
      expect(live.map((f) => f.event)).toEqual(second.events.map((e) => e.type))
      const firstSeq = second.next_seq - second.events.length
      expect(live.map((f) => Number(f.id))).toEqual(live.map((_, i) => firstSeq + i))
      expect(second.status).toBe('completed')
      expect(types(second.events)).toEqual([
        'turn.started',
        'item.started:tool_invocation',
        'item.updated:tool_invocation',
        'item.completed:tool_invocation',
        'item.started:tool_output',
        'item.completed:tool_output',
        'item.started:agent_message',
        'item.completed:agent_message',
        'turn.completed',
      ])
      expect(second.events[5]).toMatchObject({
        // VT Code's tool_output: the text extracted from the answer (here its field names).
        item: {
          type: 'tool_output',
          output: 'Structured result with fields: echo',
          status: 'completed',
        },
      })
      expect(receiver.calls).toHaveLength(1)
      expect(receiver.calls[0]?.signatureValid).toBe(true)
      expect(receiver.calls[0]?.body).toMatchObject({
        tool: 'lookup',
        arguments: { q: 'weather' },
        session_id: id,
      })
      expect(mock.requests.map((r) => r.body.model)).toEqual([MODEL, MODEL, MODEL])

      const events = await call('GET', `/v1/sessions/${id}/events`)
      expect(events.status).toBe(200)
      expect(events.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
      const lines = (await events.text()).split('\n').filter((line) => line !== '')
      const framed = lines.map((line) => JSON.parse(line) as FramedEvent)
      expect(framed.map((f) => f.seq)).toEqual(framed.map((_, i) => i))
      expect(new Set(framed.map((f) => f.schema_version))).toEqual(new Set(['0.11.0']))
      expect(framed[0]?.event).toEqual({ type: 'thread.started', thread_id: created.thread_id })
      expect(framed.map((f) => f.event)).toEqual([
        framed[0]?.event,
        ...first.events,
        ...second.events,
      ])
      expect(second.next_seq).toBe(framed.length)

      const done = await json<TurnBody>(await call('POST', `/v1/sessions/${id}/complete`), 200)
      expect(done.status).toBe('terminal')
      expect(done.events).toEqual([
        expect.objectContaining({
          type: 'thread.completed',
          subtype: 'success',
          outcome_code: 'success',
          result: 'It is sunny.',
        }),
      ])
      const tail = await call('GET', `/v1/sessions/${id}/events?after=${framed.length - 1}`)
      const rest = (await tail.text())
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as FramedEvent)
      expect(rest.map((f) => [f.seq, f.event.type])).toEqual([[framed.length, 'thread.completed']])

      const refused = await call('POST', `/v1/sessions/${id}/turns`, { input: 'More?' })
      expect(await json<{ error: { code: string } }>(refused, 409)).toMatchObject({
        error: { code: 'session_completed' },
      })
      mock.assertDone()
    })

    it('generates its OpenAPI document and serves the reference page in this runtime', async () => {
      const document = await json<{ openapi: string; paths: Record<string, object> }>(
        await call('GET', '/v1/openapi.json'),
        200,
      )
      expect(document.openapi).toBe('3.1.0')
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(['/v1/sessions', '/v1/sessions/{id}/turns', '/docs']),
      )
      const page = await call('GET', '/docs')
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<script src="/docs/init.js">')
      expect(await (await call('GET', '/docs/init.js')).text()).toContain('/v1/openapi.json')
    })

    it("discovers and calls an MCP server's tools with the SDK client in this runtime", async () => {
      if (!mock || !mcp) throw new Error('setup failed')
      mock.reset()
      const created = await json<{ session_id: string }>(
        await call('POST', '/v1/sessions', {
          mcp_servers: [{ name: 'docs', url: mcp.url, headers: { authorization: 'Bearer t' } }],
        }),
        201,
      )
      mock.enqueue(
        { toolCalls: [{ id: 'call_m', name: 'mcp__docs__search', arguments: '{"q":"edge"}' }] },
        { text: 'Found it.' },
      )
      const turn = await json<TurnBody>(
        await call('POST', `/v1/sessions/${created.session_id}/turns`, { input: 'Search' }),
        200,
      )
      expect(turn.status).toBe('completed')
      const names = ((mock.requests[0]?.body.tools ?? []) as { function: { name: string } }[]).map(
        (tool) => tool.function.name,
      )
      expect(names.filter((name) => name.startsWith('mcp__'))).toEqual([
        'mcp__docs__broken',
        'mcp__docs__search',
        'mcp__docs__unlock',
      ])
      expect(turn.events).toContainEqual({
        type: 'item.completed',
        item: {
          id: 'item_0:mcp',
          type: 'mcp_tool_call',
          tool_name: 'mcp__docs__search',
          arguments: { q: 'edge' },
          result: 'results for edge: two hits',
          status: 'completed',
        },
      })
      expect(mcp.requests.some((r) => r.rpc === 'tools/call' && r.auth === 'Bearer t')).toBe(true)
      mock.assertDone()
    })

    it('answers through the Responses API, its SDK client loaded on first use', async () => {
      if (!mock) throw new Error('setup failed')
      mock.reset()
      const created = await json<{ session_id: string }>(
        await call('POST', '/v1/sessions', { model: { api: 'responses' } }),
        201,
      )
      mock.enqueue({ api: 'responses', text: 'Via responses.' })
      const turn = await json<TurnBody>(
        await call('POST', `/v1/sessions/${created.session_id}/turns`, { input: 'Hi' }),
        200,
      )
      expect(turn.status).toBe('completed')
      expect(turn.events).toContainEqual(
        expect.objectContaining({ item: expect.objectContaining({ text: 'Via responses.' }) }),
      )
      expect(mock.requests.map((r) => r.path)).toEqual(['/v1/responses'])
      mock.assertDone()
    })
  })
}

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createOpenResponses } from '@ai-sdk/open-responses'
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { generateText, jsonSchema, type ModelMessage, stepCountIs, streamText, tool } from 'ai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import type { MockRequest } from '../support/mock-openai.ts'
import { assertConformingStream, responseResourceErrors } from '../support/open-responses-schema.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { attachRunner } from '../support/sandbox-engine.ts'

/**
 * A real third-party Open Responses client, `@ai-sdk/open-responses`, against `/v1/responses`
 * over real HTTP (real engine, mock model, reference runner for the sandbox tools). Every event
 * the client receives is also validated against the published Open Responses schema.
 */
const KEY = 'responses-client-key-0123456789'
const RUNNER_SECRET = 'responses-client-runner-secret'
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer
let runner: RunnerProcess
let root: string

beforeAll(async () => {
  engine = await startEngine()
  server = await serveApp(
    createApp({
      api: engine.service,
      auth: { keys: [{ key: KEY, tenant: 'tenant-ai-sdk' }] },
      log: () => {},
    }),
  )
  root = await mkdtemp(join(tmpdir(), 'turnline-responses-'))
  runner = await attachRunner(engine, { root, secret: RUNNER_SECRET })
})
afterAll(async () => {
  await runner?.stop()
  await server?.close()
  await engine?.close()
  if (root) await rm(root, { recursive: true, force: true })
})
beforeEach(() => engine.mock.reset())

const provider = (headers: Record<string, string> = {}) =>
  createOpenResponses({
    name: 'turnline',
    url: `${server.url}/v1/responses`,
    apiKey: KEY,
    headers,
  })

const prompt = (text: string) => [
  { role: 'user' as const, content: [{ type: 'text' as const, text }] },
]

/** Runs the client's stream to its end: its parts, and every raw event it received. */
async function clientStream(options: {
  text: string
  temperature?: number
  maxOutputTokens?: number
  headers?: Record<string, string>
}) {
  const { stream } = await provider(options.headers)('gpt-4o-mini').doStream({
    prompt: prompt(options.text),
    includeRawChunks: true,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
  })
  const parts: LanguageModelV3StreamPart[] = []
  const reader = stream.getReader()
  for (;;) {
    const next = await reader.read()
    if (next.done) break
    parts.push(next.value)
  }
  const raw = parts.flatMap((p) =>
    p.type === 'raw' ? [p.rawValue as Record<string, unknown>] : [],
  )
  return { parts: parts.filter((p) => p.type !== 'raw'), raw }
}

/** A model that runs `printf` in the sandbox once, then answers. */
function toolThenAnswer(request: MockRequest) {
  const messages = request.body.messages as { role: string; content: string }[]
  if (messages.at(-1)?.role === 'user') {
    return {
      reasoning: 'I should run the command first.',
      toolCalls: [
        {
          id: 'call_1',
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: 'printf tool-says-hi' }),
        },
      ],
    }
  }
  return { text: 'The command printed tool-says-hi.' }
}

describe('@ai-sdk/open-responses against POST /v1/responses', () => {
  it('streams a text answer the client reads whole; sampling settings reach the model', async () => {
    engine.mock.enqueue({
      text: 'The answer is forty-two.',
      usage: { input_tokens: 50, cached_input_tokens: 20, output_tokens: 7 },
    })
    const { parts, raw } = await clientStream({
      text: 'Q?',
      temperature: 0.25,
      maxOutputTokens: 64,
    })
    assertConformingStream(raw)
    expect(raw.map((e) => e.sequence_number)).toEqual(raw.map((_, i) => i))
    const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('')
    expect(text).toBe('The answer is forty-two.')
    const kinds = parts.map((p) => p.type).filter((t) => t.startsWith('text'))
    expect(kinds[0]).toBe('text-start')
    expect(kinds.at(-1)).toBe('text-end')
    const finish = parts.at(-1)
    expect(finish?.type === 'finish' && finish.finishReason.unified).toBe('stop')
    expect(finish?.type === 'finish' && finish.usage.inputTokens).toMatchObject({
      total: 50,
      cacheRead: 20,
    })
    expect(parts.some((p) => p.type === 'error')).toBe(false)
    const sent = engine.mock.requests.at(-1)?.body as Record<string, unknown>
    expect(sent.temperature).toBe(0.25)
    expect(sent.max_completion_tokens).toBe(64)
    const completed = raw.find((e) => e.type === 'response.completed')?.response as Record<
      string,
      unknown
    >
    expect(completed).toMatchObject({
      temperature: 0.25,
      max_output_tokens: 64,
      model: 'gpt-4o-mini',
    })
    engine.mock.assertDone()
  })

  it('a server-run tool is invisible to a default client: only the standard items reach it', async () => {
    engine.mock.respond(toolThenAnswer)
    const { parts, raw } = await clientStream({ text: 'Run it.' })
    assertConformingStream(raw, { extensions: false })
    expect(raw.map((e) => e.sequence_number)).toEqual(raw.map((_, i) => i))
    expect(parts.some((p) => p.type === 'error' || p.type === 'tool-call')).toBe(false)
    const items = raw.flatMap((e) =>
      e.type === 'response.output_item.done' ? [e.item as Record<string, unknown>] : [],
    )
    expect(items.map((item) => item.type)).toEqual(['reasoning', 'message'])
    expect(raw.at(-1)?.type).toBe('response.completed')
    const completed = raw.at(-1)?.response as { output: { type: string }[] }
    expect(completed.output.map((item) => item.type)).toEqual(['reasoning', 'message'])
  })

  it('with Turnline-Extensions: vtcode a server-run tool shows as vtcode items, no tool call for the client', async () => {
    engine.mock.respond(toolThenAnswer)
    const { parts, raw } = await clientStream({
      text: 'Run it.',
      headers: { 'Turnline-Extensions': 'vtcode' },
    })
    assertConformingStream(raw)
    expect(parts.some((p) => p.type === 'tool-call')).toBe(false)
    const finish = parts.at(-1)
    expect(finish?.type === 'finish' && finish.finishReason.unified).toBe('stop')
    const reasoning = parts.flatMap((p) => (p.type === 'reasoning-delta' ? [p.delta] : [])).join('')
    expect(reasoning).toBe('I should run the command first.')
    // Every text delta belongs to a text part that was started: the tool output is none.
    const open = new Set<string>()
    let text = ''
    for (const part of parts) {
      if (part.type === 'text-start') open.add(part.id)
      if (part.type === 'text-end') open.delete(part.id)
      if (part.type === 'text-delta') {
        expect(open.has(part.id)).toBe(true)
        text += part.delta
      }
    }
    expect(text).toBe('The command printed tool-says-hi.')
    const items = raw.flatMap((e) =>
      e.type === 'response.output_item.done' ? [e.item as Record<string, unknown>] : [],
    )
    expect(items.map((item) => item.type)).toEqual([
      'reasoning',
      'vtcode:tool_call',
      'vtcode:tool_output',
      'message',
    ])
    expect(items[1]?.data).toMatchObject({
      name: 'exec_command',
      arguments: { cmd: 'printf tool-says-hi' },
    })
    expect(JSON.stringify(items[2]?.data)).toContain('tool-says-hi')
  })

  it('generates without streaming: the response resource conforms and the client reads it', async () => {
    engine.mock.respond(toolThenAnswer)
    const result = await provider()('gpt-4o-mini').doGenerate({ prompt: prompt('Run it.') })
    expect(result.finishReason.unified).toBe('stop')
    expect(result.content).toEqual([
      { type: 'reasoning', text: 'I should run the command first.' },
      { type: 'text', text: 'The command printed tool-says-hi.' },
    ])
    expect(responseResourceErrors(result.response?.body)).toEqual([])
  })

  it('runs a multi-turn chat with a client tool: the tool loop and the next turn, streamed and not', async () => {
    const weatherCalls: unknown[] = []
    const tools = {
      get_weather: tool({
        description: 'Get the weather of a city',
        inputSchema: jsonSchema<{ city: string }>({
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        }),
        execute: async (input: { city: string }) => {
          weatherCalls.push(input)
          return { city: input.city, sky: 'clear', celsius: 18 }
        },
      }),
    }
    engine.mock.respond((request) => {
      const messages = request.body.messages as { role: string; content: string }[]
      const last = messages.at(-1)
      if (last?.role === 'tool')
        return { text: `Clear and 18 degrees (${last.content.length} bytes).` }
      if (JSON.stringify(last?.content).includes('weather')) {
        return {
          toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        }
      }
      return { text: `You asked ${messages.filter((m) => m.role === 'user').length} questions.` }
    })
    const model = provider()('gpt-4o-mini')
    const messages: ModelMessage[] = [{ role: 'user', content: 'What is the weather in Paris?' }]
    const first = await generateText({ model, messages, tools, stopWhen: stepCountIs(4) })
    expect(weatherCalls).toEqual([{ city: 'Paris' }])
    expect(first.steps).toHaveLength(2)
    expect(first.steps[0]?.finishReason).toBe('tool-calls')
    expect(first.text).toMatch(/^Clear and 18 degrees/)
    messages.push(...first.response.messages, {
      role: 'user',
      content: 'How many questions so far?',
    })
    const second = streamText({ model, messages, tools, stopWhen: stepCountIs(4) })
    expect(await second.text).toBe('You asked 2 questions.')
    expect((await second.steps).length).toBe(1)
  })

  it('a server tool and a client function in one round: the server runs its own, the client gets its call', async () => {
    engine.mock.respond((request) => {
      const messages = request.body.messages as { role: string; content: string }[]
      if (messages.at(-1)?.role === 'user') {
        return {
          toolCalls: [
            { id: 'call_client', name: 'ask_user', arguments: '{"q":"ok?"}' },
            {
              id: 'call_server',
              name: 'exec_command',
              arguments: JSON.stringify({ cmd: 'printf from-sandbox' }),
            },
          ],
        }
      }
      return { text: 'Both done.' }
    })
    const ask = {
      type: 'function',
      name: 'ask_user',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
    }
    const res = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Check, then ask me.', tools: [ask] }),
    })
    const first = (await res.json()) as { id: string; output: Record<string, unknown>[] }
    expect(responseResourceErrors(first, false)).toEqual([])
    expect(first.output.map((item) => item.type)).toEqual(['function_call'])
    expect(first.output[0]).toMatchObject({ call_id: 'call_client', name: 'ask_user' })
    const next = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_client', output: 'yes' }],
        tools: [ask],
      }),
    })
    expect(next.status).toBe(200)
    const sent = engine.mock.requests.at(-1)?.body.messages as {
      role: string
      content: string
      tool_call_id?: string
    }[]
    const results = sent.filter((m) => m.role === 'tool')
    expect(results.map((m) => m.tool_call_id).sort()).toEqual(['call_client', 'call_server'])
    expect(results.find((m) => m.tool_call_id === 'call_server')?.content).toContain('from-sandbox')
    expect(results.find((m) => m.tool_call_id === 'call_client')?.content).toBe('yes')
  })
})

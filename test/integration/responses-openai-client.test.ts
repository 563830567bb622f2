import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { gate } from '../support/gate.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { assertConformingStream, responseResourceErrors } from '../support/open-responses-schema.ts'

/**
 * The official `openai` client (default configuration) against `npm start` (the real entry),
 * the mock of the OpenAI API as the model. Everything the client is sent must conform to the
 * published Open Responses schema as it is, with no extension items or events.
 */
const KEY = 'responses-openai-key-0123456789'
let dir: string
let mock: MockOpenAI
let server: NodeEntry
let client: OpenAI

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-responses-openai-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    OPENAI_API_KEY: 'sk-responses-openai',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_LOG: 'off',
  })
  const url = await server.listening()
  client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})
beforeEach(() => mock.reset())

describe('the openai client against npm start', () => {
  it('responses.create answers a conforming response the client reads', async () => {
    mock.enqueue({ text: 'Hello there, friend.' })
    const response = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [{ type: 'message', role: 'user', content: 'Say hello in exactly 3 words.' }],
    })
    expect(response.status).toBe('completed')
    expect(response.output_text).toBe('Hello there, friend.')
    expect(responseResourceErrors(response, false)).toEqual([])
    mock.assertDone()
  })

  it('responses.stream reads every event and the final response; all are in the schema', async () => {
    mock.enqueue({ text: '1, 2, 3, 4, 5', reasoning: 'Counting.' })
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Count from 1 to 5.' })
    const events: Record<string, unknown>[] = []
    for await (const event of stream) events.push(event as unknown as Record<string, unknown>)
    const final = await stream.finalResponse()
    const message = final.output.find((item) => item.type === 'message')
    expect(message?.type === 'message' && message.content[0]).toMatchObject({
      type: 'output_text',
      text: '1, 2, 3, 4, 5',
    })
    expect(final.status).toBe('completed')
    expect(events.at(-1)?.type).toBe('response.completed')
    assertConformingStream(events, { extensions: false })
  })

  it('a refused request is an APIError with the type, param and message of the envelope', async () => {
    const refused = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'x', truncation: 'disabled' })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    const error = refused as InstanceType<typeof OpenAI.BadRequestError>
    expect(error.type).toBe('invalid_request')
    expect(error.param).toBe('truncation')
    expect(error.message).toContain('Turnline compacts the context')
    expect(mock.requests).toHaveLength(0)
  })

  it('the same Idempotency-Key while its response runs: 409 session_busy, never response.failed', async () => {
    const held = gate()
    mock.enqueue({ text: 'Held answer.', hold: held.promise })
    const body = { model: 'gpt-4o-mini', input: 'Answer when released.', stream: true } as const
    // As a header: the client's own `idempotencyKey` option is sent only by clients that set one.
    const key = { headers: { 'Idempotency-Key': 'resend-while-running-1' } }
    const first = await client.responses.create(body, key)
    const firstEvents: { type: string; response?: { id: string } }[] = []
    const reading = (async () => {
      for await (const event of first) firstEvents.push(event)
    })()
    await expect.poll(() => mock.requests.length).toBe(1)

    // Re-sent streamed and unstreamed while the model holds its answer: refused, not failed.
    const answers: unknown[] = []
    for (const resent of [body, { ...body, stream: false }]) {
      const answer = await client.responses
        .create(resent, key)
        .then(async (stream) => {
          const types: string[] = []
          for await (const event of stream as AsyncIterable<{ type: string }>)
            types.push(event.type)
          return types
        })
        .catch((error: unknown) => error)
      answers.push(answer)
    }
    held.open()
    await reading
    const id = firstEvents[0]?.response?.id
    expect(id).toMatch(/^resp_/)
    for (const answer of answers) {
      expect(answer).toBeInstanceOf(OpenAI.ConflictError)
      const conflict = answer as InstanceType<typeof OpenAI.ConflictError>
      expect(conflict.code).toBe('session_busy')
      expect(Number(conflict.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1)
      // The refusal names the response that runs, so a client can follow it.
      expect(conflict.error).toMatchObject({ details: { response_id: id } })
    }
    expect(firstEvents.at(-1)?.type).toBe('response.completed')
    const again = await client.responses.create({ ...body, stream: false }, key)
    expect(again).toMatchObject({ id, status: 'completed', output_text: 'Held answer.' })
    expect(mock.requests).toHaveLength(1)
  })

  it('a tool loop: function_call, then function_call_output by previous_response_id and by history', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather of a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
        strict: true,
      },
    ]
    mock.respond((request) => {
      const messages = request.body.messages as { role: string; content: string }[]
      const last = messages.at(-1)
      if (last?.role === 'tool') return { text: `The tool said ${last.content}.` }
      return { toolCalls: [{ id: 'call_42', name: 'get_weather', arguments: '{"city":"Oslo"}' }] }
    })
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Oslo?' }]
    const first = await client.responses.create({ model: 'gpt-4o-mini', input, tools })
    const call = first.output.find((item) => item.type === 'function_call')
    expect(call).toMatchObject({
      call_id: 'call_42',
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    })
    expect(first.tools).toMatchObject([{ type: 'function', name: 'get_weather', strict: true }])

    const chained = await client.responses.create({
      model: 'gpt-4o-mini',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_42', output: 'snow' }],
      tools,
    })
    expect(chained.output_text).toBe('The tool said snow.')
    expect(chained.previous_response_id).toBe(first.id)

    // The client's usual loop: the whole history with the response's own output items.
    input.push(...first.output, {
      type: 'function_call_output',
      call_id: 'call_42',
      output: 'rain',
    })
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input, tools })
    const events: Record<string, unknown>[] = []
    for await (const event of stream) events.push(event as unknown as Record<string, unknown>)
    assertConformingStream(events, { extensions: false })
    const final = await stream.finalResponse()
    const message = final.output.find((item) => item.type === 'message')
    expect(message?.type === 'message' && message.content[0]).toMatchObject({
      text: 'The tool said rain.',
    })
  })

  it('streams a function call the client assembles from its argument events', async () => {
    mock.enqueue({
      toolCalls: [{ id: 'call_7', name: 'lookup', arguments: '{"term":"open responses"}' }],
    })
    const stream = client.responses.stream({
      model: 'gpt-4o-mini',
      input: 'Look it up.',
      tools: [{ type: 'function', name: 'lookup', parameters: null, strict: false }],
    })
    const deltas: string[] = []
    stream.on('response.function_call_arguments.delta', (event) => deltas.push(event.delta))
    const final = await stream.finalResponse()
    expect(deltas.join('')).toBe('{"term":"open responses"}')
    expect(final.output).toMatchObject([
      {
        type: 'function_call',
        call_id: 'call_7',
        arguments: '{"term":"open responses"}',
        status: 'completed',
      },
    ])
  })

  it('responses.inputItems.list pages through the input items (cursor after the last id)', async () => {
    mock.enqueue({ text: 'Four.' })
    const response = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    })
    const texts: string[] = []
    for await (const item of client.responses.inputItems.list(response.id, {
      order: 'asc',
      limit: 2,
    })) {
      if (item.type === 'message') {
        for (const part of item.content) if ('text' in part) texts.push(part.text)
      }
    }
    expect(texts).toEqual(['one', 'two', 'three'])
    await client.responses.delete(response.id)
    const gone = await client.responses.inputItems.list(response.id).catch((e: unknown) => e)
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError)
  })

  it('responses.compact: the compacted window continues the conversation as input', async () => {
    mock.enqueue({ text: 'Summary: the code word is slate.' })
    const compacted = await client.responses.compact({
      model: 'gpt-4o-mini',
      input: [
        { role: 'user', content: 'Remember the code word: slate.' },
        { role: 'assistant', content: 'OK.' },
      ],
    })
    expect(compacted.object).toBe('response.compaction')
    expect(compacted.output.at(-1)?.type).toBe('compaction')
    mock.enqueue({ text: 'slate' })
    const next = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [...compacted.output, { role: 'user', content: 'What is the code word?' }],
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
    expect(next.output_text).toBe('slate')
    expect(JSON.stringify(mock.requests.at(-1)?.body)).toContain('the code word is slate')
  })

  it('responses.parse: the structured answer parsed by the client', async () => {
    mock.enqueue({ text: '{"city":"Lima","celsius":19}' })
    const parsed = await client.responses.parse({
      model: 'gpt-4o-mini',
      input: 'Weather in Lima as JSON.',
      text: {
        format: {
          type: 'json_schema',
          name: 'weather',
          strict: true,
          schema: {
            type: 'object',
            properties: { city: { type: 'string' }, celsius: { type: 'number' } },
            required: ['city', 'celsius'],
            additionalProperties: false,
          },
        },
      },
    })
    expect(parsed.status).toBe('completed')
    expect(parsed.output_parsed).toEqual({ city: 'Lima', celsius: 19 })
  })
})

import type OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { usedResponsesApp, WEATHER_TOOL } from '../support/responses-app.ts'
import { parseSse } from '../support/sse-frames.ts'

/**
 * `usage.output_tokens_details.reasoning_tokens` of a response, with the `openai` client
 * (default configuration) over real HTTP: the reasoning tokens the provider reported, the same in
 * the live stream's end, a read of the response and its replayed stream; a response that ends on
 * the client's function calls reports those of its turn so far.
 */
const app = usedResponsesApp('responses-reasoning-key-0123456789', 'tenant-ru')

type Json = Record<string, unknown>
const USAGE = { input_tokens: 40, output_tokens: 30, reasoning_tokens: 21 }

/** The events of an SSE text, `[DONE]` left out, `completed_at` (the second it ended) zeroed. */
function eventsOf(text: string): Json[] {
  return parseSse(text)
    .frames.filter((f) => f.data !== '[DONE]')
    .map((f) => JSON.parse(f.data) as Json)
    .map((e) => (e.response ? { ...e, response: { ...(e.response as Json), completed_at: 0 } } : e))
}
const get = (path: string) =>
  fetch(`${app.server.url}/v1/responses/${path}`, { headers: app.auth }).then((r) => r.text())

describe('reasoning tokens in a response’s usage', () => {
  it('are the provider’s count live, read back and replayed', async () => {
    app.engine.mock.enqueue({ text: 'Forty-two.', reasoning: 'Think it over.', usage: USAGE })
    const stream = await app.client.responses.create({ input: 'The answer?', stream: true })
    const live: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const event of stream) live.push(event)
    const end = live.at(-1)
    expect(end?.type).toBe('response.completed')
    const completed = (end as OpenAI.Responses.ResponseCompletedEvent).response
    expect(completed.usage?.output_tokens).toBe(30)
    expect(completed.usage?.output_tokens_details.reasoning_tokens).toBe(21)

    const read = await app.client.responses.retrieve(completed.id)
    expect(read.usage).toEqual(completed.usage)
    const replayed = eventsOf(await get(`${completed.id}?stream=true`))
    expect(replayed.at(-1)).toMatchObject({
      type: 'response.completed',
      response: { usage: { output_tokens_details: { reasoning_tokens: 21 } } },
    })
    expect(replayed).toEqual(live.map((e) => eventsOf(`data: ${JSON.stringify(e)}\n\n`)[0]))
  })

  it('are the same in a plain answer, and 0 when the provider reports none', async () => {
    app.engine.mock.enqueue({ text: 'Plain.', reasoning: 'Hm.', usage: USAGE })
    const answered = await app.client.responses.create({ input: 'Plainly?' })
    expect(answered.usage?.output_tokens_details.reasoning_tokens).toBe(21)
    expect((await app.client.responses.retrieve(answered.id)).usage).toEqual(answered.usage)

    app.engine.mock.enqueue({ text: 'No reasoning.', usage: { input_tokens: 5, output_tokens: 3 } })
    const none = await app.client.responses.create({ input: 'Quickly?' })
    expect(none.usage?.output_tokens_details.reasoning_tokens).toBe(0)
    expect((await app.client.responses.retrieve(none.id)).usage).toEqual(none.usage)
  })

  it('of a response ending on the client’s function call are its turn’s so far', async () => {
    app.engine.mock.enqueue({
      reasoning: 'Ask the tool.',
      toolCalls: [{ name: 'get_weather', arguments: '{"location":"Paris"}' }],
      usage: { input_tokens: 12, output_tokens: 9, reasoning_tokens: 6 },
    })
    const tools = [{ ...WEATHER_TOOL, strict: false }] as OpenAI.Responses.FunctionTool[]
    const raw = await app.post({ input: 'Weather in Paris?', tools, stream: true })
    const live = eventsOf(await raw.text())
    const end = live.at(-1) as { type: string; response: OpenAI.Responses.Response }
    expect(end.type).toBe('response.completed')
    expect(end.response.output.at(-1)?.type).toBe('function_call')
    expect(end.response.usage?.output_tokens_details.reasoning_tokens).toBe(6)
    const read = await app.client.responses.retrieve(end.response.id)
    expect(read.usage).toEqual(end.response.usage)
    expect(eventsOf(await get(`${end.response.id}?stream=true`))).toEqual(live)
  })
})

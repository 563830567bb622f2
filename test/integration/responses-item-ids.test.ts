import type OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { usedResponsesApp, WEATHER_TOOL } from '../support/responses-app.ts'
import { parseSse } from '../support/sse-frames.ts'

/**
 * The ids of a response's output items, with the `openai` client (default configuration) over
 * real HTTP: unique across the responses of a conversation, as a client keying items by id
 * across `previous_response_id` needs, and the same at every read of one response (GET, the
 * replayed stream, a stream resumed with `starting_after`).
 */
const app = usedResponsesApp('responses-item-ids-key-0123456789', 'tenant-ii')

type Json = Record<string, unknown>
const TOOLS = [{ ...WEATHER_TOOL, strict: false }] as OpenAI.Responses.FunctionTool[]
const idsOf = (response: OpenAI.Responses.Response) => response.output.map((item) => item.id)
/** Every item id an event names (`item_id`, `item.id`, the response's output). */
function eventIds(event: Json): string[] {
  const ids: string[] = []
  if (typeof event.item_id === 'string') ids.push(event.item_id)
  const item = event.item as Json | undefined
  if (typeof item?.id === 'string') ids.push(item.id)
  const output = (event.response as { output?: Json[] } | undefined)?.output ?? []
  for (const shown of output) ids.push(String(shown.id))
  return ids
}
const streamText = (id: string, after = -1) =>
  fetch(`${app.server.url}/v1/responses/${id}?stream=true&starting_after=${after}`, {
    headers: app.auth,
  }).then((r) => r.text())
const eventsOf = (text: string) =>
  parseSse(text)
    .frames.filter((f) => f.data !== '[DONE]')
    .map((f) => JSON.parse(f.data) as Json)

describe('output item ids', () => {
  it('differ between the responses of a chained conversation', async () => {
    app.engine.mock.enqueue({ text: 'First answer.', reasoning: 'One.' })
    const first = await app.client.responses.create({ input: 'First?' })
    app.engine.mock.enqueue({ text: 'Second answer.', reasoning: 'Two.' })
    const second = await app.client.responses.create({
      input: 'Second?',
      previous_response_id: first.id,
    })
    expect(first.output).toHaveLength(2)
    expect(second.output).toHaveLength(2)
    const all = [...idsOf(first), ...idsOf(second)]
    expect(new Set(all).size).toBe(4)
    // Derived from the response id: the same engine item in another response is another id.
    for (const response of [first, second]) {
      const session = response.id.slice('resp_'.length)
      for (const id of idsOf(response)) expect(id?.endsWith(`_${session}`)).toBe(true)
    }
  })

  it('of a function call differ too, and its call id is answered as before', async () => {
    const call = () =>
      app.engine.mock.enqueue({
        toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"location":"Oslo"}' }],
      })
    call()
    const asked = await app.client.responses.create({ input: 'Weather in Oslo?', tools: TOOLS })
    app.engine.mock.enqueue({ text: 'Cold.' })
    const answered = await app.client.responses.create({
      previous_response_id: asked.id,
      tools: TOOLS,
      input: [{ type: 'function_call_output', call_id: 'call_w1', output: '-3 C' }],
    })
    call()
    const again = await app.client.responses.create({
      previous_response_id: answered.id,
      input: 'And now?',
      tools: TOOLS,
    })
    const calls = [asked, again].map(
      (r) => r.output.at(-1) as OpenAI.Responses.ResponseFunctionToolCall,
    )
    expect(calls.map((c) => c.call_id)).toEqual(['call_w1', 'call_w1'])
    expect(calls[0]?.id).not.toBe(calls[1]?.id)
    expect(answered.output_text).toBe('Cold.')
    expect(idsOf(answered)).not.toContain(calls[0]?.id)
  })

  it('are the same live, read back, replayed and resumed', async () => {
    app.engine.mock.enqueue({ text: 'A streamed answer.', reasoning: 'Think.' })
    const res = await app.post({ input: 'Stream it?', stream: true })
    const live = eventsOf(await res.text())
    const completed = live.at(-1)?.response as OpenAI.Responses.Response
    const liveIds = [...new Set(live.flatMap(eventIds))]
    expect(liveIds).toEqual(idsOf(completed))
    expect(idsOf(await app.client.responses.retrieve(completed.id))).toEqual(liveIds)
    const replayed = eventsOf(await streamText(completed.id))
    expect(replayed.flatMap(eventIds)).toEqual(live.flatMap(eventIds))
    const resumed = eventsOf(await streamText(completed.id, 4))
    expect(resumed.flatMap(eventIds)).toEqual(live.slice(5).flatMap(eventIds))
  })
})

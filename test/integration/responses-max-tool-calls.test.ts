import type OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { responseResourceErrors } from '../support/open-responses-schema.ts'
import { usedResponsesApp } from '../support/responses-app.ts'

/**
 * `max_tool_calls` of `POST /v1/responses` as the specification has it: the most calls of the
 * server's own tools run in the response; once reached, the model is offered none, a call it
 * still makes is not run, and the response completes. The official `openai` client against the
 * real app over HTTP, the mock OpenAI server as the model, the workspace's artifact tools (run by
 * the server) as the tools.
 */
const KEY = 'responses-max-tool-calls-key-0123'
const app = usedResponsesApp(KEY, 'tenant-max-calls')

/**
 * A create request with `max_tool_calls`, which the client's types declare only for its
 * WebSocket events (it sends the body as given).
 */
const limited = (input: string): OpenAI.Responses.ResponseCreateParamsNonStreaming => {
  const body = { model: 'gpt-4o-mini', input, max_tool_calls: 1 }
  return body
}
const echoed = (response: object) => (response as { max_tool_calls?: unknown }).max_tool_calls

const note = (id: string, text: string) => ({
  id,
  name: 'append_note',
  arguments: JSON.stringify({ text }),
})

interface SentMessage {
  role: string
  content: string
  tool_call_id?: string
}
const sent = (n: number) =>
  app.engine.mock.requests[n]?.body as {
    messages: SentMessage[]
    tools?: { function: { name: string } }[]
    tool_choice?: unknown
  }

describe('max_tool_calls on POST /v1/responses', () => {
  it('1, a model that calls a server tool once and then answers: completed', async () => {
    app.engine.mock.enqueue({ toolCalls: [note('call_1', 'one')] }, { text: 'Noted one.' })
    const response = await app.client.responses.create(limited('Note "one".'))
    expect(response.status).toBe('completed')
    expect(response.error).toBeNull()
    expect(response.incomplete_details).toBeNull()
    expect(response.output_text).toBe('Noted one.')
    expect(echoed(response)).toBe(1)
    expect(responseResourceErrors(response, false)).toEqual([])
    const results = sent(1).messages.filter((m) => m.role === 'tool')
    expect(results).toEqual([
      expect.objectContaining({
        tool_call_id: 'call_1',
        content: expect.stringMatching(/^appended to /),
      }),
    ])
    expect(sent(0).tool_choice).toBeUndefined()
    // The answer is asked for with every tool still defined, none to be called.
    expect(sent(1).tool_choice).toBe('none')
    expect(sent(1).tools?.map((t) => t.function.name)).toContain('append_note')
    const read = await app.client.responses.retrieve(response.id)
    expect(read.status).toBe('completed')
    expect(echoed(read)).toBe(1)
    app.engine.mock.assertDone()
  })

  it('1, a model that keeps calling: the second call is not run, the response completes', async () => {
    app.engine.mock.enqueue(
      { toolCalls: [note('call_1', 'one')] },
      { toolCalls: [note('call_2', 'two')] },
      { text: 'Noted one; two was not run.' },
    )
    const response = await app.client.responses.create(limited('Note "one", then "two".'))
    expect(response.status).toBe('completed')
    expect(response.output_text).toBe('Noted one; two was not run.')
    expect(app.engine.mock.requests.map((r) => r.body.tool_choice)).toEqual([
      undefined,
      'none',
      'none',
    ])
    const results = sent(2).messages.filter((m) => m.role === 'tool')
    expect(results.map((m) => m.tool_call_id)).toEqual(['call_1', 'call_2'])
    expect(results[1]?.content).toBe(
      'not run: max_tool_calls 1 was reached in this turn; no more tool calls are run, answer with what you have',
    )
    // The one that ran wrote its note; the one past the limit wrote nothing.
    const notes = await app.engine.store.get('tenant-max-calls/default/.vtcode/state/notes.md')
    const written = new TextDecoder().decode(notes?.body)
    expect(written).toMatch(/\] one\n$/)
    expect(written).not.toContain('two')
    app.engine.mock.assertDone()
  })
})

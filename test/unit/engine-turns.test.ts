import { describe, expect, it } from 'vitest'
import { parseVersionedLine } from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { echoTool } from '../support/engine-deps.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

const types = (events: ThreadEvent[]) =>
  events.map((e) => ('item' in e ? `${e.type}:${e.item.type}` : e.type))

describe('turn engine', () => {
  it('runs a multi-turn session with an HTTP tool and records it canonically', async () => {
    const { service, model, receiver } = fixture.engine
    const created = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      instructions: 'Be brief.',
    })
    expect(created).toMatchObject({ status: 'active', thread_id: created.session_id })

    model.enqueue(
      {
        toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"weather"}' }],
        usage: { input_tokens: 20, output_tokens: 5 },
      },
      { text: 'It is sunny.', usage: { input_tokens: 40, output_tokens: 6 } },
    )
    const first = await service.stepTurn('t1', created.session_id, { input: 'Weather?' })
    expect(first.status).toBe('completed')
    expect(types(first.events)).toEqual([
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
    const invocation = first.events[3] as Extract<ThreadEvent, { type: 'item.completed' }>
    expect(invocation.item).toEqual({
      id: 'item_0',
      type: 'tool_invocation',
      tool_name: 'lookup',
      arguments: { q: 'weather' },
      tool_call_id: 'call_1',
      status: 'completed',
      outcome: 'success',
    })
    expect(first.events[5]).toMatchObject({
      item: {
        id: 'item_0:output',
        call_id: 'item_0',
        // The extracted text of the answer (its field names for a JSON object without text).
        output: 'Structured result with fields: echo',
        status: 'completed',
      },
    })
    expect(first.events.at(-1)).toEqual({
      type: 'turn.completed',
      usage: {
        input_tokens: 60,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 11,
      },
    })
    expect(receiver.calls).toHaveLength(1)
    expect(receiver.calls[0]?.signatureValid).toBe(true)
    expect(receiver.calls[0]?.body).toMatchObject({
      tool: 'lookup',
      arguments: { q: 'weather' },
      tool_call_id: 'call_1',
    })
    // The follow-up request carried the system prompt, the call and its result.
    const followUp = model.requests[1]?.messages as { role: string; content?: string }[]
    expect(followUp.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool'])

    model.enqueue({ text: 'Bye.' })
    const second = await service.stepTurn('t1', created.session_id, { input: 'Thanks' })
    expect(second.status).toBe('completed')
    const history = model.requests[2]?.messages as { role: string }[]
    expect(history.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ])

    const done = await service.complete('t1', created.session_id)
    expect(done.status).toBe('terminal')
    expect(done.events).toEqual([
      expect.objectContaining({
        type: 'thread.completed',
        subtype: 'success',
        outcome_code: 'success',
        result: 'Bye.',
        num_turns: 3,
      }),
    ])
    // every event, in order, dense seq, from the API and from events.jsonl
    const page = await service.readEvents('t1', created.session_id, -1, 1000)
    const all = [
      { type: 'thread.started', thread_id: created.session_id },
      ...first.events,
      ...second.events,
      ...done.events,
    ]
    expect(page.events.map((e) => e.seq)).toEqual(all.map((_, i) => i))
    expect(page.events.map((e) => e.line.event)).toEqual(all)
    const view = await service.getSession('t1', created.session_id)
    expect(view).toMatchObject({
      status: 'completed',
      num_turns: 3,
      turn_count: 2,
      last_seq: all.length - 1,
    })
    model.assertDone()
  })

  it('tells the model why its arguments were invalid and does not call the tool', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', { tools: [echoTool(receiver.url)] })
    model.enqueue(
      { toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q": 42}' }] },
      { toolCalls: [{ id: 'call_10', name: 'nope', arguments: '{}' }] },
      { text: 'ok' },
    )
    const turn = await service.stepTurn('t1', session_id, { input: 'go' })
    const completed = turn.events.filter(
      (e): e is Extract<ThreadEvent, { type: 'item.completed' }> => e.type === 'item.completed',
    )
    expect(completed[0]?.item).toMatchObject({
      type: 'tool_invocation',
      status: 'failed',
      outcome: 'invalid_tool',
    })
    expect(completed[1]?.item).toMatchObject({ type: 'tool_output', status: 'failed' })
    expect(JSON.stringify(completed[1]?.item)).toContain('/q')
    expect(completed[2]?.item).toMatchObject({ tool_name: 'nope', outcome: 'invalid_tool' })
    expect(receiver.calls).toHaveLength(0)
    const told = (
      model.requests[1]?.messages as { role: string; content: string }[] | undefined
    )?.at(-1)
    expect(told?.role).toBe('tool')
    expect(told?.content).toMatch(/do not match the tool's schema/)
  })

  it('forwards tool arguments byte for byte; what JSON.parse would change is shown as the raw text', async () => {
    const { service, model, receiver } = fixture.engine
    receiver.calls.length = 0
    const tool = { ...echoTool(receiver.url), parameters: { type: 'object' } }
    const { session_id } = await service.createSession('t1', { tools: [tool] })
    // beyond 2^53, integer-like keys (JavaScript would reorder them), a number beyond f64
    const args = '{"q":"a","n":12345678901234567890,"2":"b","1":"c","x":1e400}'
    model.enqueue(
      { toolCalls: [{ id: 'call_exact', name: 'lookup', arguments: args }] },
      { toolCalls: [{ id: 'call_plain', name: 'lookup', arguments: '{"q": "b"}' }] },
      { text: 'done' },
    )
    const turn = await service.stepTurn('t1', session_id, { input: 'go' })
    expect(turn.status).toBe('completed')
    expect(receiver.calls[0]?.raw).toContain(`"arguments":${args},`)
    const invocations = turn.events.flatMap((e) =>
      e.type === 'item.completed' && e.item.type === 'tool_invocation' ? [e.item] : [],
    )
    expect(invocations.map((item) => item.arguments)).toEqual([args, { q: 'b' }])
    const lines = (await service.readEvents('t1', session_id, -1, 1000)).events
    expect(JSON.stringify(lines)).toContain(JSON.stringify(args))
  })

  it('writes events.jsonl whose every line is a valid versioned ThreadEvent', async () => {
    const { service, model, store } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'a' }, { text: 'b' })
    await service.stepTurn('t1', session_id, { input: 'x' })
    await service.stepTurn('t1', session_id, { input: 'y' })
    await service.cancel('t1', session_id)
    const key = `t1/default/.vtcode/sessions/${session_id}/events.jsonl`
    const text = new TextDecoder().decode((await store.get(key))?.body)
    const lines = text.trimEnd().split('\n')
    const events = lines.map((line) => parseVersionedLine(line).event)
    expect(events[0]).toEqual({ type: 'thread.started', thread_id: session_id })
    expect(events.at(-1)).toMatchObject({
      type: 'thread.completed',
      subtype: 'cancelled',
      outcome_code: 'cancelled',
    })
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(2)
    // the finished thread's Open Responses view is derived next to it
    const view = new TextDecoder().decode(
      (await store.get(`t1/default/.vtcode/sessions/${session_id}/derived/open-responses.jsonl`))
        ?.body,
    )
    expect(view).toMatch(/^event: response\.created\n/)
    expect(view).toContain('vtcode:thread_completed')
    expect(view.trimEnd().endsWith('data: [DONE]')).toBe(true)
  })
})

import { describe, expect, it } from 'vitest'
import type { ParsedThreadEvent, ThreadEvent } from '../../src/contract/thread-event.ts'
import { OpenResponsesBridge } from '../../src/core/open-responses/bridge.ts'
import { openResponsesViewText } from '../../src/core/open-responses/derived-view.ts'
import { toOpenUsage } from '../../src/core/open-responses/response-resource.ts'
import type { StreamEvent } from '../../src/core/open-responses/types.ts'
import { assertConformingStream, responseResourceErrors } from '../support/open-responses-schema.ts'

const NOW = () => 1_787_000_000_000
const golden = (name: string) => `../fixtures/open-responses/${name}`

const usage = {
  input_tokens: 120,
  cached_input_tokens: 64,
  cache_creation_tokens: 0,
  output_tokens: 30,
}

/** One tool call and a streamed answer, as the engine records them. */
const THREAD: ThreadEvent[] = [
  { type: 'thread.started', thread_id: 'session-1' },
  { type: 'turn.started' },
  { type: 'item.started', item: { id: 'item_0', type: 'reasoning', text: 'Look' } },
  { type: 'item.updated', item: { id: 'item_0', type: 'reasoning', text: 'Look it up.' } },
  { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: 'Look it up.' } },
  {
    type: 'item.started',
    item: {
      id: 'item_1',
      type: 'tool_invocation',
      tool_name: 'lookup',
      tool_call_id: 'call_a',
      status: 'in_progress',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_1',
      type: 'tool_invocation',
      tool_name: 'lookup',
      arguments: { q: 'x' },
      tool_call_id: 'call_a',
      status: 'completed',
      outcome: 'success',
    },
  },
  {
    type: 'item.started',
    item: {
      id: 'item_1:output',
      type: 'tool_output',
      call_id: 'item_1',
      tool_call_id: 'call_a',
      output: '',
      status: 'in_progress',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_1:output',
      type: 'tool_output',
      call_id: 'item_1',
      tool_call_id: 'call_a',
      output: 'found',
      exit_code: 0,
      status: 'completed',
    },
  },
  { type: 'item.started', item: { id: 'item_2', type: 'agent_message', text: 'It i' } },
  { type: 'item.updated', item: { id: 'item_2', type: 'agent_message', text: 'It is x.' } },
  { type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'It is x.' } },
  { type: 'turn.completed', usage },
  {
    type: 'thread.completed',
    thread_id: 'session-1',
    session_id: 'session-1',
    subtype: 'success',
    outcome_code: 'success',
    result: 'It is x.',
    usage,
    num_turns: 2,
  },
]

function bridged(events: readonly ParsedThreadEvent[]): StreamEvent[] {
  const bridge = new OpenResponsesBridge({
    responseId: 'resp_1',
    settings: { model: 'gpt-test' },
    now: NOW,
  })
  return events.flatMap((event) => bridge.push(event))
}

describe('OpenResponsesBridge', () => {
  it('bridges a realistic thread exactly as the golden view', async () => {
    const text = openResponsesViewText(THREAD, { settings: { model: 'gpt-test' }, now: NOW })
    await expect(text).toMatchFileSnapshot(golden('tool-and-answer.sse'))
  })

  it('conforms to the published Open Responses schema, event by event', () => {
    const events = bridged(THREAD)
    assertConformingStream(events as unknown as Record<string, unknown>[])
    const completed = events.find((e) => e.type === 'response.completed')
    expect(completed?.type === 'response.completed' && completed.response.status).toBe('completed')
    expect(
      completed && 'response' in completed && responseResourceErrors(completed.response),
    ).toEqual([])
  })

  it('shows server-run tools as vtcode: items (arguments as VT Code writes them), never function_call', () => {
    const done = bridged(THREAD).flatMap((e) =>
      e.type === 'response.output_item.done' ? [e.item] : [],
    )
    expect(done.map((item) => item.type)).toEqual([
      'reasoning',
      'vtcode:tool_call',
      'vtcode:tool_output',
      'message',
    ])
    expect(done[1]).toEqual({
      type: 'vtcode:tool_call',
      id: 'item_1',
      status: 'completed',
      data: { call_id: 'call_a', name: 'lookup', arguments: { q: 'x' } },
    })
    expect(done[2]).toEqual({
      type: 'vtcode:tool_output',
      id: 'item_1:output',
      status: 'completed',
      data: { call_id: 'call_a', output: 'found', exit_code: 0 },
    })
    expect(done[0]).toEqual({
      type: 'reasoning',
      id: 'item_0',
      status: 'completed',
      summary: [{ type: 'summary_text', text: 'Look it up.' }],
      content: [{ type: 'reasoning_text', text: 'Look it up.' }],
    })
  })

  it('numbers every event densely from 0 and sends only new suffixes', () => {
    const events = bridged(THREAD)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const deltas = events.flatMap((e) => ('delta' in e ? [[e.type, e.delta]] : []))
    expect(deltas).toEqual([
      ['response.reasoning_summary_text.delta', 'Look'],
      ['response.reasoning_summary_text.delta', ' it up.'],
      ['vtcode:tool_output.delta', 'found'],
      ['response.output_text.delta', 'It i'],
      ['response.output_text.delta', 's x.'],
    ])
  })

  it('maps usage with every detail the specification requires', () => {
    expect(toOpenUsage(usage)).toEqual({
      input_tokens: 120,
      output_tokens: 30,
      total_tokens: 150,
      input_tokens_details: { cached_tokens: 64 },
      output_tokens_details: { reasoning_tokens: 0 },
    })
    expect(toOpenUsage({ ...usage, cached_input_tokens: 0 }).input_tokens_details).toEqual({
      cached_tokens: 0,
    })
  })

  it('adds an item implicitly on an update it has not seen, and an atomic message whole', () => {
    const types = bridged([
      { type: 'thread.started', thread_id: 't' },
      { type: 'item.updated', item: { id: 'm', type: 'agent_message', text: 'hi' } },
      { type: 'item.completed', item: { id: 'n', type: 'agent_message', text: 'yo' } },
      { type: 'turn.completed', usage },
    ]).map((e) => e.type)
    // A message's output_item.done waits for what comes next (the end says if it was cut).
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
  })

  it('ignores plan deltas, permissions, interjections and unknown events', () => {
    expect(
      bridged([
        { type: 'plan.delta', thread_id: 't', turn_id: 'u', item_id: 'p', delta: 'x' },
        { type: 'permission.requested', tool_name: 'x' },
        { type: 'permission.resolved', tool_name: 'x', decision: 'allow', wait_ms: 3 },
        { type: 'interjected', source: 'queue', image_count: 0, redirect_kind: 'interjection' },
        { type: 'turn.started' },
        { type: 'unknown', original_type: 'future.event', source: '{"type":"future.event"}' },
      ]),
    ).toEqual([])
  })

  it('fails the response on turn.failed (model_error) or error (server_error), once', () => {
    const failed = bridged([
      { type: 'thread.started', thread_id: 't' },
      { type: 'turn.failed', message: 'boom' },
      { type: 'turn.completed', usage },
      { type: 'error', message: 'late' },
    ])
    expect(failed.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.failed',
    ])
    const last = failed[2]
    expect(last?.type === 'response.failed' && last.response.error).toEqual({
      code: 'model_error',
      message: 'boom',
    })
    const server = bridged([{ type: 'error', message: 'store down' }]).at(-1)
    expect(server?.type === 'response.failed' && server.response.error).toEqual({
      code: 'server_error',
      message: 'store down',
    })
  })
})

describe('how a message ends: its output_item.done waits for what comes next', () => {
  const asJson = (events: StreamEvent[]) =>
    JSON.parse(JSON.stringify(events)) as Parameters<typeof assertConformingStream>[0]
  const endingAtThread = (tools: string[] = []) =>
    new OpenResponsesBridge({
      responseId: 'resp_1',
      settings: {
        model: 'gpt-test',
        tools: tools.map((name) => ({
          type: 'function' as const,
          name,
          description: null,
          parameters: null,
          strict: null,
        })),
      },
      now: NOW,
      endAtThread: true,
      extensions: false,
    })
  const message = (text: string): ParsedThreadEvent[] => [
    { type: 'item.started', item: { id: 'item_0', type: 'agent_message', text: '' } },
    { type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text } },
  ]
  const threadCompleted = (stop_reason: string): ParsedThreadEvent => ({
    type: 'thread.completed',
    thread_id: 't',
    session_id: 't',
    subtype: 'success',
    outcome_code: 'success',
    result: 'x',
    usage,
    num_turns: 1,
    stop_reason,
  })

  it('an answer cut at max_output_tokens: the streamed done says incomplete, before response.incomplete', () => {
    const bridge = endingAtThread()
    const events = [
      { type: 'thread.started', thread_id: 't' } as const,
      ...message('A long answer that was'),
      { type: 'turn.completed', usage } as const,
      threadCompleted('max_tokens'),
    ].flatMap((event) => bridge.push(event))
    assertConformingStream(asJson(events), { extensions: false })
    const types = events.map((e) => e.type)
    expect(types.slice(-2)).toEqual(['response.output_item.done', 'response.incomplete'])
    const done = events.at(-2) as { item: { status: string } }
    expect(done.item.status).toBe('incomplete')
    expect(bridge.response.output[0]).toMatchObject({ status: 'incomplete' })
  })

  it('an answer that ended: done says completed', () => {
    const bridge = endingAtThread()
    const events = [
      { type: 'thread.started', thread_id: 't' } as const,
      ...message('Done.'),
      { type: 'turn.completed', usage } as const,
      threadCompleted('end_turn'),
    ].flatMap((event) => bridge.push(event))
    const done = events.find((e) => e.type === 'response.output_item.done') as {
      item: { status: string }
    }
    expect(done.item.status).toBe('completed')
    expect(events.at(-1)?.type).toBe('response.completed')
  })

  it('a message before a client call is done (completed) before the call is added; the usage of a waiting response is given', () => {
    const bridge = endingAtThread(['get_weather'])
    const events = [
      { type: 'thread.started', thread_id: 't' } as const,
      ...message('Let me look.'),
      {
        type: 'item.started',
        item: {
          id: 'item_1',
          type: 'tool_invocation',
          tool_name: 'get_weather',
          tool_call_id: 'call_1',
          status: 'in_progress',
        },
      } as const,
    ].flatMap((event) => bridge.push(event))
    const ending = bridge.awaitClient(toOpenUsage(usage))
    const all = [...events, ...ending]
    assertConformingStream(asJson(all), { extensions: false })
    const types = all.map((e) =>
      e.type === 'response.output_item.added'
        ? `${e.type}:${(e as { item: { type: string } }).item.type}`
        : e.type,
    )
    const done = types.indexOf('response.output_item.done')
    expect(done).toBeGreaterThan(0)
    expect(done).toBeLessThan(types.indexOf('response.output_item.added:function_call'))
    expect((all[done] as { item: { status: string } }).item.status).toBe('completed')
    expect(bridge.response).toMatchObject({ status: 'completed', usage: toOpenUsage(usage) })
    expect(responseResourceErrors(bridge.response, false)).toEqual([])
  })
})

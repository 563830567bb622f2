import { describe, expect, it } from 'vitest'
import type { ParsedThreadEvent } from '../../src/contract/thread-event.ts'
import { OpenResponsesBridge } from '../../src/core/open-responses/bridge.ts'
import { openResponsesFrame } from '../../src/core/open-responses/sse.ts'
import type { StreamEvent } from '../../src/core/open-responses/types.ts'
import { assertConformingStream, streamEventErrors } from '../support/open-responses-schema.ts'

const golden = (name: string) => `../fixtures/open-responses/${name}`

function bridged(events: readonly ParsedThreadEvent[]): StreamEvent[] {
  const bridge = new OpenResponsesBridge({
    responseId: 'resp_1',
    settings: { model: 'gpt-test' },
    now: () => 0,
  })
  return events.flatMap((event) => bridge.push(event))
}

describe('Open Responses item and custom event mapping', () => {
  it('the schema check refuses what the published schema refuses', () => {
    // What the bridge used to send: function_call arguments as an object, a response
    // resource without most required fields, an un-prefixed custom event.
    expect(
      streamEventErrors({
        type: 'response.output_item.done',
        sequence_number: 3,
        output_index: 0,
        item: {
          type: 'function_call',
          id: 'i',
          status: 'completed',
          call_id: 'c',
          name: 'f',
          arguments: { a: 1 },
        },
      }),
    ).not.toEqual([])
    expect(
      streamEventErrors({
        type: 'response.created',
        sequence_number: 0,
        response: {
          id: 'r',
          object: 'response',
          created_at: 1,
          status: 'in_progress',
          model: 'm',
          output: [],
        },
      }),
    ).not.toEqual([])
    expect(
      streamEventErrors({
        type: 'response.custom_event',
        sequence_number: 4,
        event_type: 'vtcode.x',
      }),
    ).not.toEqual([])
    expect(streamEventErrors({ type: 'vtcode:x', sequence_number: 4, data: {} })).toEqual([])
  })

  it('uses a raw call id once; a reused one falls back to the item id; spooled output', () => {
    const call = (id: string) =>
      ({
        type: 'item.completed',
        item: {
          id,
          type: 'tool_invocation',
          tool_name: 't',
          tool_call_id: 'dup',
          status: 'failed',
        },
      }) as const
    const events = bridged([
      call('item_0'),
      call('item_1'),
      {
        type: 'item.completed',
        item: {
          id: 'item_1:output',
          type: 'tool_output',
          call_id: 'item_1',
          tool_call_id: 'dup',
          spool_path: '.vtcode/out.txt',
          output: '',
          status: 'completed',
        },
      },
    ])
    const done = events.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []))
    expect(done).toEqual([
      {
        type: 'vtcode:tool_call',
        id: 'item_0',
        status: 'failed',
        data: { call_id: 'dup', name: 't', arguments: null },
      },
      {
        type: 'vtcode:tool_call',
        id: 'item_1',
        status: 'failed',
        data: { call_id: 'item_1', name: 't', arguments: null },
      },
      {
        type: 'vtcode:tool_output',
        id: 'item_1:output',
        status: 'completed',
        data: { call_id: 'item_1', output: 'Output saved to .vtcode/out.txt', exit_code: null },
      },
    ])
  })

  it('maps VT Code-only items to vtcode: items laid out as VT Code (data, nulls, failed)', () => {
    const events = bridged([
      { type: 'item.completed', item: { id: 'p', type: 'plan', text: '# Plan' } },
      {
        type: 'item.completed',
        item: {
          id: 'c',
          type: 'command_execution',
          command: 'ls',
          aggregated_output: 'a',
          exit_code: 1,
          status: 'failed',
        },
      },
      {
        type: 'item.completed',
        item: {
          id: 'f',
          type: 'file_change',
          changes: [{ path: 'a.ts', kind: 'add' }],
          status: 'completed',
        },
      },
      { type: 'item.completed', item: { id: 'w', type: 'web_search', query: 'q' } },
      {
        type: 'item.completed',
        item: { id: 'h', type: 'harness', event: 'verification_passed', attempt: 1 },
      },
      { type: 'item.completed', item: { id: 'e', type: 'error', message: 'denied' } },
    ])
    const done = events.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []))
    expect(done).toEqual([
      { type: 'vtcode:plan', id: 'p', status: 'completed', data: { text: '# Plan' } },
      {
        type: 'vtcode:command_execution',
        id: 'c',
        status: 'failed',
        data: {
          command: 'ls',
          arguments: null,
          aggregated_output: 'a',
          exit_code: 1,
          status: 'failed',
        },
      },
      {
        type: 'vtcode:file_change',
        id: 'f',
        status: 'completed',
        data: { changes: [{ path: 'a.ts', kind: 'add' }], status: 'completed' },
      },
      {
        type: 'vtcode:web_search',
        id: 'w',
        status: 'completed',
        data: { query: 'q', provider: null, results: null },
      },
      {
        type: 'vtcode:harness_event',
        id: 'h',
        status: 'completed',
        data: {
          event: 'verification_passed',
          message: null,
          command: null,
          path: null,
          exit_code: null,
          attempt: 1,
          error_category: null,
          duration_ms: null,
        },
      },
      { type: 'vtcode:error', id: 'e', status: 'failed', data: { message: 'denied' } },
    ])
    assertConformingStream(events as unknown as Record<string, unknown>[])
  })

  it('writes custom events with explicit nulls and without segment fields', async () => {
    const text = bridged([
      { type: 'thread.started', thread_id: 't' },
      {
        type: 'thread.compact_boundary',
        thread_id: 't',
        trigger: 'auto',
        mode: 'local',
        original_message_count: 12,
        compacted_message_count: 5,
        previous_segment_id: 's0',
        new_segment_id: 's1',
      },
      {
        type: 'context.reset',
        thread_id: 't',
        turn_id: 'turn-3',
        trigger: 'plan_approval',
        plan_preserved: true,
        previous_context_usage_percent: 7,
        tool_budget_reset: true,
      },
      { type: 'plan.approval.requested', thread_id: 't', turn_id: 'turn-2' },
      {
        type: 'plan.approval.resolved',
        thread_id: 't',
        turn_id: 'turn-2',
        decision: 'execute',
        automatic: false,
      },
    ])
      .slice(2)
      .map(openResponsesFrame)
      .join('')
    await expect(text).toMatchFileSnapshot(golden('custom-events.sse'))
  })
})

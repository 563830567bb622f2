import { describe, expect, it } from 'vitest'
import type { ParsedThreadEvent } from '../../src/contract/thread-event.ts'
import { OpenResponsesBridge } from '../../src/core/open-responses/bridge.ts'
import { openResponsesFrame } from '../../src/core/open-responses/sse.ts'
import type { StreamEvent } from '../../src/core/open-responses/types.ts'

const golden = (name: string) => `../fixtures/open-responses/${name}`

function bridged(events: readonly ParsedThreadEvent[]): StreamEvent[] {
  const bridge = new OpenResponsesBridge({ responseId: 'resp_1', model: 'gpt-test', now: () => 0 })
  return events.flatMap((event) => bridge.push(event))
}

describe('Open Responses item and custom event mapping', () => {
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
        type: 'function_call',
        id: 'item_0',
        status: 'incomplete',
        call_id: 'dup',
        name: 't',
        arguments: '',
      },
      {
        type: 'function_call',
        id: 'item_1',
        status: 'incomplete',
        call_id: 'item_1',
        name: 't',
        arguments: '',
      },
      {
        type: 'function_call_output',
        id: 'item_1:output',
        status: 'completed',
        call_id: 'item_1',
        output: 'Output saved to .vtcode/out.txt',
      },
    ])
  })

  it('maps VT Code-only items to vtcode: extension items', () => {
    const done = bridged([
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
    ]).flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []))
    expect(done).toEqual([
      { type: 'vtcode:plan', id: 'p', status: 'completed', text: '# Plan' },
      {
        type: 'vtcode:command_execution',
        id: 'c',
        status: 'incomplete',
        command: 'ls',
        aggregated_output: 'a',
        exit_code: 1,
      },
      {
        type: 'vtcode:file_change',
        id: 'f',
        status: 'completed',
        changes: [{ path: 'a.ts', kind: 'add' }],
      },
      { type: 'vtcode:web_search', id: 'w', status: 'completed', query: 'q' },
      {
        type: 'vtcode:harness_event',
        id: 'h',
        status: 'completed',
        event: 'verification_passed',
        attempt: 1,
      },
      { type: 'vtcode:error', id: 'e', status: 'completed', message: 'denied' },
    ])
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

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseEventLine } from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { type AtifTrajectory, atifTrajectoryText } from '../../src/core/exports/atif-trajectory.ts'

const AGENT = { name: 'turnline', version: '0.1.0', model: 'gpt-4o-mini' }
const usage = (input: number, output: number, cached = 0, creation = 0) => ({
  input_tokens: input,
  cached_input_tokens: cached,
  cache_creation_tokens: creation,
  output_tokens: output,
})

function trajectory(events: readonly ThreadEvent[]): AtifTrajectory {
  return JSON.parse(atifTrajectoryText(events, AGENT)) as AtifTrajectory
}

/** A thread as Turnline writes it: reasoning, a tool call (with MCP detail), an answer. */
const THREAD: ThreadEvent[] = [
  { type: 'thread.started', thread_id: 'session-1' },
  { type: 'turn.started' },
  { type: 'item.started', item: { id: 'item_0', type: 'reasoning', text: 'Look it up.' } },
  { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: 'Look it up.' } },
  {
    type: 'item.started',
    item: {
      id: 'item_1',
      type: 'tool_invocation',
      tool_name: 'mcp__docs__search',
      tool_call_id: 'call_1',
      status: 'in_progress',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_1:mcp',
      type: 'mcp_tool_call',
      tool_name: 'mcp__docs__search',
      arguments: { q: 'x' },
      result: 'two hits',
      status: 'completed',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_1',
      type: 'tool_invocation',
      tool_name: 'mcp__docs__search',
      arguments: { q: 'x' },
      tool_call_id: 'call_1',
      status: 'completed',
      outcome: 'success',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_1:output',
      type: 'tool_output',
      call_id: 'item_1',
      tool_call_id: 'call_1',
      output: 'two hits',
      status: 'completed',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_2',
      type: 'tool_invocation',
      tool_name: 'exec_command',
      arguments: { cmd: 'false' },
      tool_call_id: 'call_2',
      status: 'failed',
      outcome: 'error',
    },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_2:output',
      type: 'tool_output',
      call_id: 'item_2',
      tool_call_id: 'call_2',
      output: '',
      exit_code: 1,
      status: 'failed',
    },
  },
  { type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: 'Found two.' } },
  { type: 'turn.completed', usage: usage(120, 30, 100, 5) },
  {
    type: 'thread.completed',
    thread_id: 'session-1',
    session_id: 'session-1',
    subtype: 'success',
    outcome_code: 'success',
    result: 'Found two.',
    usage: usage(120, 30, 100, 5),
    num_turns: 2,
  },
]

describe('ATIF trajectory', () => {
  it("builds VT Code's steps and final metrics from a thread", () => {
    const t = trajectory(THREAD)
    expect(t.schema_version).toBe('ATIF-v1.4')
    expect(t.session_id).toBe('session-1')
    expect(t.agent).toEqual({ name: 'turnline', version: '0.1.0', model_name: 'gpt-4o-mini' })
    expect(t.steps).toEqual([
      { step_id: 1, source: 'agent', reasoning_content: 'Look it up.' },
      {
        step_id: 2,
        source: 'agent',
        tool_calls: [
          { tool_call_id: 'call_1', function_name: 'mcp__docs__search', arguments: { q: 'x' } },
        ],
        observation: { results: [{ source_call_id: 'call_1', content: 'two hits' }] },
      },
      {
        step_id: 3,
        source: 'agent',
        tool_calls: [
          { tool_call_id: 'call_2', function_name: 'exec_command', arguments: { cmd: 'false' } },
        ],
        observation: { results: [{ source_call_id: 'call_2', content: ' [FAILED]' }] },
      },
      { step_id: 4, source: 'agent', message: 'Found two.' },
      {
        step_id: 5,
        source: 'system',
        message: 'turn_completed',
        metrics: {
          prompt_tokens: 120,
          completion_tokens: 30,
          cached_tokens: 100,
          extra: { cache_creation_tokens: 5 },
        },
      },
    ])
    // Per-turn usage is counted once: the thread's aggregate does not add to it.
    expect(t.final_metrics).toEqual({
      total_prompt_tokens: 120,
      total_completion_tokens: 30,
      total_cached_tokens: 100,
      total_steps: 5,
      extra: { num_turns: 2 },
    })
  })

  it("writes the JSON pretty with keys in VT Code's order", () => {
    const text = atifTrajectoryText(THREAD.slice(0, 4), AGENT)
    expect(text.split('\n')[1]).toBe('  "schema_version": "ATIF-v1.4",')
    expect(Object.keys(JSON.parse(text))).toEqual([
      'schema_version',
      'session_id',
      'agent',
      'steps',
      'final_metrics',
    ])
  })

  it('maps every VT Code item and event of the wire fixture', () => {
    const lines = readFileSync(new URL('../fixtures/vtcode/events.jsonl', import.meta.url), 'utf8')
    const events = lines.split('\n').filter(Boolean).map(parseEventLine) as ThreadEvent[]
    const t = trajectory(events)
    const messages = t.steps.map(
      (s) => s.message ?? s.reasoning_content ?? s.tool_calls?.[0]?.function_name,
    )
    expect(messages).toEqual([
      'context_compaction: 12 messages -> 5 messages (recovery)',
      'exec_command',
      'hello',
      'turn_completed',
      'boom',
      'context_reset: 7% context used; plan preserved: true; tool budget reset: true',
      'context_compaction: 40 messages -> 6 messages (auto)',
      'context_compaction: 3 messages -> 1 messages (unknown)',
      'context_reset: 255% context used; plan preserved: false; tool budget reset: false',
      'provider timeout',
      'write_file',
      'command_execution',
      '# Plan\n- [ ] analyze\n- [ ] change',
      'Check the manifest first.',
      'no stage',
      'file_changes: src/a.rs: Update, src/b.rs: Add, src/c.rs: Delete',
      'search_docs',
      'web_search: serde flatten internally tagged',
      'web_search: nothing found',
      'harness: ToolRetryAttempted',
      'harness: VerificationPassed',
      'hook denied: write outside workspace',
      'fatal: session event persistence failed',
    ])
    expect(t.steps[8]?.extra).toMatchObject({ trigger: 'unknown' })
    expect(t.steps[10]?.observation?.results[0]?.content).toBe('Output saved [FAILED]')
    expect(t.steps[11]).toMatchObject({
      tool_calls: [{ tool_call_id: 'item_3', arguments: { command: 'cargo test' } }],
      extra: { exit_code: 0 },
    })
    expect(t.steps[12]?.extra).toEqual({ vtcode_item_type: 'plan' })
    expect(t.steps[19]?.extra).toEqual({ harness_message: 'retrying after timeout' })
    // No per-turn usage after the last thread.completed: its num_turns is kept.
    expect(t.final_metrics).toMatchObject({ total_prompt_tokens: 101, total_steps: 23 })
  })
})

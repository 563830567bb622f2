import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  EVENT_SCHEMA_VERSION,
  parseEventLine,
  parseVersionedLine,
  serializeEvent,
  serializeVersioned,
  serializeVersionedLine,
} from '../../src/contract/serialize.ts'
import {
  THREAD_EVENT_TYPES,
  type ThreadEvent,
  type VersionedThreadEvent,
} from '../../src/contract/thread-event.ts'
import { THREAD_ITEM_TYPES } from '../../src/contract/thread-item.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/vtcode/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '')

/** The example lines of the contract reference, §1.8, verbatim. */
const REFERENCE_LINES = [
  '{"type":"thread.compact_boundary","thread_id":"thread-1","trigger":"recovery","mode":"provider","original_message_count":12,"compacted_message_count":5}',
  '{"type":"plan.approval.resolved","thread_id":"thread-1","turn_id":"turn-1","decision":"future_decision","automatic":true}',
  '{"type":"thread.started","thread_id":"session-ws-20260823T010203Z_000001-01234"}',
  '{"type":"turn.started"}',
  '{"type":"item.completed","item":{"id":"item_0","type":"tool_invocation","tool_name":"exec_command","arguments":{"cmd":"pwd"},"tool_call_id":"call_0","status":"completed","outcome":"success"}}',
  '{"type":"item.completed","item":{"id":"item_0:output","type":"tool_output","call_id":"item_0","tool_call_id":"call_0","output":"done","exit_code":0,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"hello"}}',
  '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":2,"cache_creation_tokens":0,"output_tokens":3}}',
  '{"type":"turn.failed","message":"boom"}',
  '{"type":"context.reset","thread_id":"thread-1","turn_id":"turn-3","trigger":"plan_approval","plan_preserved":true,"previous_context_usage_percent":7,"tool_budget_reset":true}',
  '{"type":"thread.completed","thread_id":"thread-1","session_id":"session-1","subtype":"error_max_budget_usd","outcome_code":"budget_limit_reached","stop_reason":"max_tokens","usage":{"input_tokens":10,"cached_input_tokens":4,"cache_creation_tokens":2,"output_tokens":5},"total_cost_usd":1.25,"num_turns":3}',
]

describe('golden round trips (parse, then serialize, gives the same bytes)', () => {
  it.each(REFERENCE_LINES)('reference line %#', (line) => {
    expect(serializeEvent(parseEventLine(line))).toBe(line)
  })

  it('reference versioned line', () => {
    const line = '{"schema_version":"0.11.0","event":{"type":"turn.started"}}'
    const parsed = parseVersionedLine(line)
    expect(parsed).toEqual({ schema_version: '0.11.0', event: { type: 'turn.started' } })
    expect(serializeVersioned(parsed)).toBe(line)
  })

  it.each(fixture('events.jsonl'))('bare fixture line %#', (line) => {
    expect(serializeEvent(parseEventLine(line))).toBe(line)
  })

  it.each(fixture('events.versioned.jsonl'))('versioned fixture line %#', (line) => {
    expect(serializeVersioned(parseVersionedLine(line))).toBe(line)
  })

  it('the fixtures cover every event type and every item type', () => {
    const events = fixture('events.jsonl').map(parseEventLine)
    const eventTypes = new Set(events.map((event) => event.type))
    for (const type of THREAD_EVENT_TYPES) expect(eventTypes, type).toContain(type)
    const itemTypes = new Set(events.flatMap((event) => ('item' in event ? [event.item.type] : [])))
    for (const type of THREAD_ITEM_TYPES) expect(itemTypes, type).toContain(type)
  })

  it('the versioned fixture is the bare fixture wrapped, keeping each schema_version', () => {
    const bare = fixture('events.jsonl')
    const versioned = fixture('events.versioned.jsonl').map(parseVersionedLine)
    expect(versioned.map((line) => serializeEvent(line.event))).toEqual(bare)
    expect(versioned[3]?.schema_version).toBe('0.10.0')
  })

  it('tolerates a terminating newline (LF or CRLF)', () => {
    const line = REFERENCE_LINES[3] ?? ''
    expect(parseEventLine(`${line}\n`)).toEqual({ type: 'turn.started' })
    expect(parseEventLine(`${line}\r\n`)).toEqual({ type: 'turn.started' })
  })
})

describe('writing typed events', () => {
  it('writes keys in serde order whatever order the object was built in', () => {
    const event = {
      num_turns: 3,
      total_cost_usd: 1.25,
      usage: {
        output_tokens: 5,
        cache_creation_tokens: 2,
        cached_input_tokens: 4,
        input_tokens: 10,
      },
      stop_reason: 'max_tokens',
      outcome_code: 'budget_limit_reached',
      subtype: 'error_max_budget_usd',
      session_id: 'session-1',
      thread_id: 'thread-1',
      type: 'thread.completed',
    } satisfies ThreadEvent
    expect(serializeEvent(event)).toBe(REFERENCE_LINES[10])
  })

  it('writes items as id, type, then fields in declaration order', () => {
    const event: ThreadEvent = {
      type: 'item.completed',
      item: {
        status: 'completed',
        exit_code: 0,
        output: 'done',
        tool_call_id: 'call_0',
        call_id: 'item_0',
        type: 'tool_output',
        id: 'item_0:output',
      },
    }
    expect(serializeEvent(event)).toBe(REFERENCE_LINES[5])
  })

  it('omits absent optional fields and always writes output / aggregated_output', () => {
    const output = serializeEvent({
      type: 'item.started',
      item: { id: 'item_1:output', type: 'tool_output', call_id: 'item_1', status: 'in_progress' },
    } as ThreadEvent)
    expect(output).toBe(
      '{"type":"item.started","item":{"id":"item_1:output","type":"tool_output","call_id":"item_1","output":"","status":"in_progress"}}',
    )
    const command = serializeEvent({
      type: 'item.started',
      item: {
        id: 'item_2',
        type: 'command_execution',
        command: 'ls',
        arguments: undefined,
        status: 'in_progress',
      },
    } as ThreadEvent)
    expect(command).toBe(
      '{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}',
    )
  })

  it('writes total_cost_usd as Rust writes an f64', () => {
    const base = {
      type: 'thread.completed',
      thread_id: 't',
      session_id: 's',
      subtype: 'success',
      outcome_code: 'success',
      usage: {
        input_tokens: 0,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 0,
      },
      num_turns: 1,
    } as const
    const cost = (total_cost_usd: number) =>
      /"total_cost_usd":([^,]*),/.exec(serializeEvent({ ...base, total_cost_usd }))?.[1]
    expect(cost(2)).toBe('2.0')
    expect(cost(0)).toBe('0.0')
    expect(cost(0.0000025)).toBe('2.5e-6')
    expect(cost(0.1 + 0.2)).toBe('0.30000000000000004')
  })

  it('replaces unpaired surrogates, which Rust strings cannot hold', () => {
    const cut = '😀'.slice(0, 1)
    const line = serializeEvent({ type: 'turn.failed', message: `x${cut}y` })
    expect(line).toBe('{"type":"turn.failed","message":"x\uFFFDy"}')
  })

  it('refuses to write an invalid event', () => {
    const bad = { type: 'turn.completed', usage: { input_tokens: 1 } } as unknown as ThreadEvent
    expect(() => serializeEvent(bad)).toThrow(/usage\.cached_input_tokens/)
    const nulled = { type: 'turn.failed', message: 'x', usage: null } as unknown as ThreadEvent
    expect(() => serializeEvent(nulled)).toThrow(/usage/)
  })

  it('wraps canonical lines with schema version 0.11.0', () => {
    expect(EVENT_SCHEMA_VERSION).toBe('0.11.0')
    expect(serializeVersionedLine({ type: 'turn.started' })).toBe(
      '{"schema_version":"0.11.0","event":{"type":"turn.started"}}',
    )
    const older: VersionedThreadEvent = { schema_version: '0.8.0', event: { type: 'turn.started' } }
    expect(serializeVersioned(older)).toBe(
      '{"schema_version":"0.8.0","event":{"type":"turn.started"}}',
    )
  })
})

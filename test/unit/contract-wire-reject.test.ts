import { describe, expect, it } from 'vitest'
import {
  COMMAND_EXECUTION_STATUSES,
  HARNESS_EVENT_KINDS,
  isKnownValue,
  PLAN_APPROVAL_DECISIONS,
  THREAD_COMPLETION_SUBTYPES,
  TOOL_OUTCOMES,
} from '../../src/contract/enums.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  MAX_EVENT_LINE_BYTES,
  parseEventLine,
  parseVersionedLine,
  serializeEvent,
  serializeVersioned,
  serializeVersionedLine,
} from '../../src/contract/serialize.ts'
import { isUnknownEvent } from '../../src/contract/thread-event.ts'

function corrupt(line: string, parse: (line: string) => unknown = parseEventLine): string {
  try {
    parse(line)
  } catch (error) {
    expect(isTurnlineError(error, 'corrupt_data'), String(error)).toBe(true)
    return (error as Error).message
  }
  throw new Error(`accepted: ${line}`)
}

const USAGE =
  '{"input_tokens":1,"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":1}'

describe('forward compatibility', () => {
  it('keeps an unknown event type opaque and writes it back unchanged', () => {
    const line = '{"type":"session.paused","reason":"quota","ratio":1.50,"nested":{"2":1,"1":0}}'
    const event = parseEventLine(line)
    expect(isUnknownEvent(event)).toBe(true)
    expect(event).toMatchObject({ type: 'unknown', original_type: 'session.paused' })
    expect(serializeEvent(event)).toBe(line)
    expect(serializeVersionedLine(event)).toBe(`{"schema_version":"0.11.0","event":${line}}`)
  })

  it('keeps an unknown event type inside a versioned line, byte for byte', () => {
    const line = '{"schema_version":"0.12.0","event":{ "type" : "x.y", "a" : [1.0, 2e3] }}'
    const parsed = parseVersionedLine(line)
    expect(parsed.event).toMatchObject({ type: 'unknown', original_type: 'x.y' })
    expect(serializeVersioned(parsed)).toBe(
      '{"schema_version":"0.12.0","event":{ "type" : "x.y", "a" : [1.0, 2e3] }}',
    )
  })

  it('accepts unknown values of open enums and writes them back as read', () => {
    const line =
      '{"type":"plan.approval.resolved","thread_id":"thread-1","turn_id":"turn-1","decision":"future_decision","automatic":true}'
    const event = parseEventLine(line)
    if (event.type !== 'plan.approval.resolved') throw new Error(event.type)
    expect(event.decision).toBe('future_decision')
    expect(isKnownValue(PLAN_APPROVAL_DECISIONS, event.decision)).toBe(false)
    expect(serializeEvent(event)).toBe(line)
    const completed = parseEventLine(
      `{"type":"thread.completed","thread_id":"t","session_id":"s","subtype":"unknown","outcome_code":"x","usage":${USAGE},"num_turns":1}`,
    )
    if (completed.type !== 'thread.completed') throw new Error(completed.type)
    expect(isKnownValue(THREAD_COMPLETION_SUBTYPES, completed.subtype)).toBe(false)
  })

  it('rejects unknown values of closed enums', () => {
    expect(
      corrupt(
        '{"type":"item.completed","item":{"id":"i","type":"tool_invocation","tool_name":"t","status":"done"}}',
      ),
    ).toMatch(/item\.status/)
    expect(
      corrupt('{"type":"permission.resolved","tool_name":"t","decision":"maybe","wait_ms":1}'),
    ).toMatch(/decision/)
    expect(
      corrupt('{"type":"item.completed","item":{"id":"h","type":"harness","event":"exploded"}}'),
    ).toMatch(/item\.event/)
  })

  it('spells every enum value as the reference does', () => {
    expect(COMMAND_EXECUTION_STATUSES).toEqual(['completed', 'failed', 'in_progress'])
    expect(TOOL_OUTCOMES).toContain('permission_cancelled')
    expect(HARNESS_EVENT_KINDS).toHaveLength(19)
    expect(PLAN_APPROVAL_DECISIONS).toEqual([
      'execute',
      'auto_accept',
      'fresh_context',
      'revise',
      'cancel',
      'switch_build',
      'switch_auto',
    ])
  })
})

describe('rejections (as VT Code serde rejects them)', () => {
  it('rejects an unknown item type', () => {
    expect(
      corrupt('{"type":"item.completed","item":{"id":"item_0","type":"todo_list","items":[]}}'),
    ).toMatch(/item\.type/)
  })

  it('rejects a usage object without its four fields', () => {
    expect(corrupt('{"type":"turn.completed","usage":{}}')).toMatch(/usage\.input_tokens/)
    expect(corrupt('{"type":"turn.completed"}')).toMatch(/usage/)
  })

  it('rejects null in an optional field', () => {
    corrupt('{"type":"turn.failed","message":"boom","usage":null}')
    corrupt(
      `{"type":"thread.completed","thread_id":"t","session_id":"s","subtype":"success","outcome_code":"success","result":null,"usage":${USAGE},"num_turns":1}`,
    )
    corrupt(
      '{"type":"item.completed","item":{"id":"i","type":"tool_output","call_id":"c","output":"","exit_code":null,"status":"completed"}}',
    )
    corrupt('{"type":"turn.started","token_breakdown":null}')
  })

  it('keeps a JSON null given as tool arguments (any JSON value)', () => {
    const line =
      '{"type":"item.completed","item":{"id":"i","type":"tool_invocation","tool_name":"t","arguments":null,"status":"completed"}}'
    expect(serializeEvent(parseEventLine(line))).toBe(line)
  })

  it('reads a missing output / aggregated_output as "" and writes it', () => {
    const event = parseEventLine(
      '{"type":"item.completed","item":{"id":"i:output","type":"tool_output","call_id":"i","status":"completed"}}',
    )
    expect(event).toMatchObject({ item: { output: '' } })
    expect(serializeEvent(event)).toContain('"output":""')
    const command = parseEventLine(
      '{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","status":"completed"}}',
    )
    expect(command).toMatchObject({ item: { aggregated_output: '' } })
  })

  it('rejects integers out of their Rust range', () => {
    corrupt(
      '{"type":"context.reset","thread_id":"t","turn_id":"u","trigger":"plan_approval","plan_preserved":true,"previous_context_usage_percent":256,"tool_budget_reset":true}',
    )
    corrupt('{"type":"permission.resolved","tool_name":"t","decision":"allow","wait_ms":-1}')
    corrupt(
      '{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"x","exit_code":2147483648,"status":"failed"}}',
    )
  })

  it('rejects fractional spellings in integer fields but allows them where floats belong', () => {
    expect(
      corrupt(
        `{"type":"turn.completed","usage":${USAGE.replace('"input_tokens":1', '"input_tokens":1.0')}}`,
      ),
    ).toMatch(/usage\.input_tokens: expected an integer, got 1\.0/)
    corrupt(
      '{"type":"interjected","source":"direct","image_count":1e0,"redirect_kind":"interjection"}',
    )
    corrupt(
      '{"schema_version":"0.11.0","event":{"type":"permission.resolved","tool_name":"t","decision":"deny","wait_ms":5.0}}',
      parseVersionedLine,
    )
    const args =
      '{"type":"item.completed","item":{"id":"i","type":"tool_invocation","tool_name":"t","arguments":{"x":0.5,"y":1e-7},"status":"completed"}}'
    expect(serializeEvent(parseEventLine(args))).toBe(args)
    // Unknown members are ignored, as serde ignores them.
    expect(parseEventLine('{"type":"turn.started","later_field":2.5}')).toEqual({
      type: 'turn.started',
    })
  })

  it('names the problem for lines that are not events', () => {
    expect(corrupt('')).toMatch(/empty line/)
    expect(corrupt('   \n')).toMatch(/empty line/)
    expect(corrupt('{"type":"turn.started"')).toMatch(/invalid JSON/)
    expect(corrupt('[1,2]')).toMatch(/not a JSON object/)
    expect(corrupt('{"usage":{}}')).toMatch(/no string "type"/)
    expect(corrupt('{"type":"turn.started"}\n{"type":"turn.started"}')).toMatch(
      /more than one line/,
    )
    expect(corrupt('{"event":{"type":"turn.started"}}', parseVersionedLine)).toMatch(
      /schema_version/,
    )
    expect(corrupt('{"schema_version":"0.11.0"}', parseVersionedLine)).toMatch(/"event"/)
  })

  it('rejects a line longer than the limit', () => {
    const text = 'x'.repeat(MAX_EVENT_LINE_BYTES)
    const line = `{"type":"turn.failed","message":"${text}"}`
    expect(corrupt(line)).toMatch(/line too long/)
    // Counted in UTF-8 bytes, not UTF-16 units.
    const wide = `{"type":"turn.failed","message":"${'é'.repeat(MAX_EVENT_LINE_BYTES / 2)}"}`
    expect(corrupt(wide)).toMatch(/line too long/)
  })
})

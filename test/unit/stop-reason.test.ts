import { describe, expect, it } from 'vitest'
import { normalizeStopReason } from '../../src/core/model/stop-reason.ts'

describe('stop_reason as VT Code reports it', () => {
  it.each([
    ['stop', 'end_turn'],
    ['completed', 'end_turn'],
    ['end_turn', 'end_turn'],
    ['length', 'max_tokens'],
    ['max_output_tokens', 'max_tokens'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['incomplete', 'incomplete'],
  ])('%s → %s', (raw, expected) => {
    expect(normalizeStopReason(raw)).toBe(expected)
  })
})

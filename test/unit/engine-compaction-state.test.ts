import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseBatch } from '../../src/contract/batch.ts'
import { parseEngineState } from '../../src/contract/engine-state.ts'
import { contextWindowOf } from '../../src/core/model/context-window.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/engine/${name}`, import.meta.url))
const base = () => parseBatch(new Uint8Array(fixture('batch-0-created.json'))).state ?? {}

describe('engine state: compaction (read-only fixtures)', () => {
  it('reads states written before compaction existed: no compaction field', () => {
    expect(parseEngineState(base()).compaction).toBeUndefined()
  })

  it('reads the segment, anchor, envelope path and reset marker merged over batch 0', () => {
    const patch = JSON.parse(fixture('engine-state-compaction.json').toString('utf8'))
    const state = parseEngineState({ ...base(), ...patch })
    expect(state.compaction).toMatchObject({
      segment: { id: 'segment-00000002', sequence: 2, provider: 'openai:chat' },
      pending: false,
      usage_anchor: { input_tokens: 1240, message_count: 14 },
      compactions: 1,
      stall_count: 1,
    })
    expect(state.compaction?.reset_manifest).toMatch(/tasks\/current_context_reset\.md$/)
    // The harness defaults of a config written before the new settings existed.
    expect(state.config.harness.compact_on_model_switch).toBe(true)
  })

  it('reads a cleared compaction (null) and refuses a malformed segment', () => {
    expect(parseEngineState({ ...base(), compaction: null }).compaction).toBeNull()
    expect(parseEngineState({ ...base(), compaction: {} }).compaction).toEqual({
      pending: false,
      compactions: 0,
    })
    expect(() => parseEngineState({ ...base(), compaction: { segment: { id: 'seg-1' } } })).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
  })
})

describe('context window', () => {
  it('takes the session setting, then the table by family, else unknown', () => {
    expect(contextWindowOf({ name: 'gpt-4o-mini', api: 'chat', context_window: 32_000 })).toBe(
      32_000,
    )
    expect(contextWindowOf({ name: 'openai/gpt-4o', api: 'chat' })).toBe(128_000)
    expect(contextWindowOf({ name: 'gpt-4.1-mini', api: 'chat' })).toBe(1_047_576)
    expect(contextWindowOf({ name: 'gpt-5', api: 'responses' })).toBe(400_000)
    expect(contextWindowOf({ name: 'o1-mini', api: 'chat' })).toBe(128_000)
    expect(contextWindowOf({ name: 'o3', api: 'chat' })).toBe(200_000)
    expect(contextWindowOf({ name: 'gpt-4', api: 'chat' })).toBe(8_192)
    expect(contextWindowOf({ name: 'llama3.1:8b', api: 'chat' })).toBeUndefined()
  })
})

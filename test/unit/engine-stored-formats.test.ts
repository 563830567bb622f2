import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseBatch } from '../../src/contract/batch.ts'
import { parseEngineState } from '../../src/contract/engine-state.ts'
import { parseSessionPointer } from '../../src/contract/session-pointer.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/engine/${name}`, import.meta.url))

describe('engine stored formats (read-only fixtures)', () => {
  it('reads the engine state a new session writes in batch 0', () => {
    const batch = parseBatch(new Uint8Array(fixture('batch-0-created.json')))
    const state = parseEngineState(batch.state)
    expect(state.config.tools.map((t) => t.name)).toEqual(['lookup'])
    expect(state.config.limits).toEqual({
      max_turns: 10,
      max_budget_usd: 2,
      budget_warning_threshold: 0.75,
    })
    expect(state).toMatchObject({
      model_requests: 0,
      item_counter: 0,
      open_turn: null,
      recent_turns: [],
    })
  })

  it('reads a later state merged over it, with an open turn and cleared fields as null', () => {
    const base = parseBatch(new Uint8Array(fixture('batch-0-created.json'))).state ?? {}
    const patch = JSON.parse(fixture('engine-state-open-turn.json').toString('utf8'))
    const state = parseEngineState({ ...base, ...patch })
    expect(state.open_turn?.pending_calls[0]).toMatchObject({
      item_id: 'item_0',
      tool_call_id: 'call_1',
    })
    expect(state.last_failure).toBeNull()
  })

  it('refuses an engine state of another version or shape', () => {
    const base = parseBatch(new Uint8Array(fixture('batch-0-created.json'))).state ?? {}
    expect(() => parseEngineState({ ...base, engine_version: 2 })).toThrow(
      expect.objectContaining({ code: 'unsupported_version' }),
    )
    expect(() => parseEngineState({ ...base, usage: {} })).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
  })

  it('reads the session pointer and refuses other versions', () => {
    const pointer = parseSessionPointer(new Uint8Array(fixture('session-pointer.json')))
    expect(pointer).toMatchObject({
      format: 'turnline.session-pointer',
      version: 1,
      workspace: 'repo-1',
    })
    const other = JSON.stringify({ ...pointer, version: 2 })
    expect(() => parseSessionPointer(new TextEncoder().encode(other))).toThrow(
      expect.objectContaining({ code: 'unsupported_version' }),
    )
    expect(() => parseSessionPointer(new TextEncoder().encode('{'))).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
  })
})

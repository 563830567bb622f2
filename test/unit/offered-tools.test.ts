import { describe, expect, it } from 'vitest'
import type { OpenTurn } from '../../src/contract/engine-state.ts'
import { readSessionConfig, type SessionConfigInput } from '../../src/contract/session-config.ts'
import { offeredTools } from '../../src/core/turn/offered-tools.ts'
import type { ToolDefinition } from '../../src/ports/model-client.ts'

/** A session's tool_choice and parallel_tool_calls applied to each model request of a turn. */
const tool = (name: string): ToolDefinition => ({ name, description: name, parameters: {} })
const CATALOG = [tool('exec_command'), tool('get_weather'), tool('get_time')]

const open = (toolLoops: number): OpenTurn => ({
  turn_id: 'turn-1',
  pending_calls: [],
  tools_running: false,
  usage: { input_tokens: 0, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 },
  tool_loops: toolLoops,
})

const offer = (config: Partial<SessionConfigInput>, loops = 0, catalog = CATALOG) =>
  offeredTools(readSessionConfig(config), open(loops), catalog)

describe('offeredTools', () => {
  it('auto (or nothing set): every tool, no choice sent', () => {
    expect(offer({})).toEqual({ tools: CATALOG })
    expect(offer({ tool_choice: 'auto' })).toEqual({ tools: CATALOG })
  })

  it('none holds for every request of the turn', () => {
    expect(offer({ tool_choice: 'none' })).toEqual({ tools: CATALOG, toolChoice: 'none' })
    expect(offer({ tool_choice: 'none' }, 3)).toEqual({ tools: CATALOG, toolChoice: 'none' })
  })

  it('a forced choice holds until the model has made a round of tool calls', () => {
    expect(offer({ tool_choice: 'required' })).toEqual({ tools: CATALOG, toolChoice: 'required' })
    expect(offer({ tool_choice: 'required' }, 1)).toEqual({ tools: CATALOG })
    const named = { tool_choice: { type: 'function', name: 'get_weather' } } as const
    expect(offer(named)).toEqual({ tools: CATALOG, toolChoice: { name: 'get_weather' } })
    expect(offer(named, 1)).toEqual({ tools: CATALOG })
  })

  it('allowed_tools offers only the listed tools, with its mode', () => {
    const allowed: Partial<SessionConfigInput> = {
      tool_choice: {
        type: 'allowed_tools',
        mode: 'required',
        tools: [{ type: 'function', name: 'get_time' }],
      },
    }
    expect(offer(allowed)).toEqual({ tools: [tool('get_time')], toolChoice: 'required' })
    expect(offer(allowed, 2)).toEqual({ tools: [tool('get_time')] })
  })

  it('parallel_tool_calls: false is sent with every request; true is the default', () => {
    expect(offer({ parallel_tool_calls: false }, 4)).toEqual({
      tools: CATALOG,
      parallelToolCalls: false,
    })
    expect(offer({ parallel_tool_calls: true })).toEqual({ tools: CATALOG })
  })

  it('refuses a choice naming a tool the session does not offer, or forcing a call with none', () => {
    expect(offer({ tool_choice: { type: 'function', name: 'send_mail' } })).toEqual({
      refused: 'tool_choice names "send_mail", which the session does not offer',
    })
    expect(offer({ tool_choice: 'required' }, 0, [])).toEqual({
      refused: 'tool_choice requires a tool call, but the session offers no tools',
    })
    expect(offer({ tool_choice: 'none' }, 0, [])).toEqual({ tools: [] })
  })

  it('once harness.max_tool_calls server calls have run: every tool under none', () => {
    const limited = (run: number, config: Partial<SessionConfigInput> = {}) =>
      offeredTools(
        readSessionConfig({ ...config, harness: { max_tool_calls: 2 } }),
        { ...open(1), tool_calls_run: run },
        CATALOG,
      )
    expect(limited(1)).toEqual({ tools: CATALOG })
    expect(limited(2)).toEqual({ tools: CATALOG, toolChoice: 'none' })
    expect(limited(3, { parallel_tool_calls: false })).toEqual({
      tools: CATALOG,
      toolChoice: 'none',
      parallelToolCalls: false,
    })
    expect(offer({}, 5)).toEqual({ tools: CATALOG })
  })

  it("past harness.max_tool_calls the client's functions stay offered: the limit does not count them", () => {
    const weather = {
      name: 'get_weather',
      description: 'get_weather',
      parameters: {},
    }
    const config = readSessionConfig({ client_tools: [weather], harness: { max_tool_calls: 1 } })
    const reached = { ...open(1), tool_calls_run: 1 }
    expect(offeredTools(config, reached, CATALOG)).toEqual({ tools: [tool('get_weather')] })
    const none = readSessionConfig({ ...config, tool_choice: 'none' })
    expect(offeredTools(none, reached, CATALOG)).toEqual({ tools: CATALOG, toolChoice: 'none' })
  })

  it('the session config refuses shapes that are no tool choice', () => {
    expect(() => readSessionConfig({ tool_choice: 'always' })).toThrow(/tool_choice/)
    expect(() => readSessionConfig({ tool_choice: { type: 'function' } })).toThrow(/tool_choice/)
  })
})

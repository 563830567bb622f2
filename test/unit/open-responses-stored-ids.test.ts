import { describe, expect, it } from 'vitest'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { openResponsesView } from '../../src/core/open-responses/open-responses-view.ts'

/**
 * A stored response reads as it was first shown: one recorded before its output item ids were
 * scoped keeps the engine's `item_<n>` and, without a reasoning count, reports 0; one recorded
 * since shows `<engine id>_<session id>` and the count it is given.
 */
const usage = {
  input_tokens: 9,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 5,
}
const EVENTS: ThreadEvent[] = [
  { type: 'thread.started', thread_id: 'sess-1' },
  { type: 'turn.started' },
  { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: 'Hm.' } },
  { type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'Hi.' } },
  { type: 'turn.completed', usage },
  {
    type: 'thread.completed',
    thread_id: 'sess-1',
    session_id: 'sess-1',
    subtype: 'success',
    outcome_code: 'success',
    result: 'Hi.',
    usage,
    num_turns: 1,
  },
]
const OLD_RECORD = { v: 1, created_at: 1_700_000_000, model: 'm', max_tool_calls: null }
const configWith = (record: object) =>
  SessionConfigSchema.parse({ metadata: { 'turnline:open_responses': JSON.stringify(record) } })
type Shown = { output: { id: string }[]; usage: { output_tokens_details: object } }
function read(record: object, reasoningTokens?: number) {
  const view = openResponsesView(configWith(record), {
    sessionId: 'sess-1',
    now: () => 1_700_000_001_000,
    reasoningTokens: () => reasoningTokens,
  })
  const frames = EVENTS.map((event) => view.frames(event)).join('')
  return { frames, response: view.response as Shown }
}

describe('a stored response read back', () => {
  it('recorded before: the engine’s item ids and 0 reasoning tokens, as first shown', () => {
    const { frames, response } = read(OLD_RECORD)
    expect(response.output.map((item) => item.id)).toEqual(['item_0', 'item_1'])
    expect(response.usage.output_tokens_details).toEqual({ reasoning_tokens: 0 })
    expect(frames).toContain('"item_id":"item_1"')
    expect(frames).not.toContain('_0_sess-1')
  })

  it('recorded since: ids carrying its session id, and its reasoning count', () => {
    const { frames, response } = read({ ...OLD_RECORD, scoped_item_ids: true }, 3)
    expect(response.output.map((item) => item.id)).toEqual(['item_0_sess-1', 'item_1_sess-1'])
    expect(response.usage.output_tokens_details).toEqual({ reasoning_tokens: 3 })
    expect(frames).not.toMatch(/"item_id":"item_\d"/)
    expect(frames).not.toMatch(/"id":"item_\d"/)
  })
})

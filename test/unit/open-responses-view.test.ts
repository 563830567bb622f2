import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import {
  openResponsesViewText,
  writeOpenResponsesView,
} from '../../src/core/open-responses/derived-view.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'
import { parseSse } from '../support/sse-frames.ts'

const usage = {
  input_tokens: 9,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 2,
}
const EVENTS: ThreadEvent[] = [
  { type: 'thread.started', thread_id: 'sess-1' },
  { type: 'turn.started' },
  { type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'hi' } },
  { type: 'turn.completed', usage },
  {
    type: 'thread.completed',
    thread_id: 'sess-1',
    session_id: 'sess-1',
    subtype: 'success',
    outcome_code: 'success',
    result: 'hi',
    usage,
    num_turns: 1,
  },
]

describe('derived/open-responses.jsonl', () => {
  it('writes the SSE-framed view of the thread under the session root, ending with [DONE]', async () => {
    const store = new MemoryObjectStore()
    const keys = new SessionKeys('pre', { tenant: 't1', workspace: 'ws', sessionId: 'sess-1' })
    const now = () => 1_000_000
    const { key, bytes } = await writeOpenResponsesView(store, keys, EVENTS, {
      settings: { model: 'm' },
      now,
    })
    expect(key).toBe('pre/t1/ws/.vtcode/sessions/sess-1/derived/open-responses.jsonl')
    const stored = await store.get(key)
    const text = new TextDecoder().decode(stored?.body)
    expect(stored?.body.length).toBe(bytes)
    expect(text).toBe(openResponsesViewText(EVENTS, { settings: { model: 'm' }, now }))
    expect(text.endsWith('\n\ndata: [DONE]\n\n')).toBe(true)
    const { frames } = parseSse(text)
    expect(frames.map((f) => f.event ?? f.data)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
      'vtcode:thread_completed',
      '[DONE]',
    ])
    const first = JSON.parse(frames[0]?.data ?? '') as { response: { id: string } }
    expect(first.response.id).toBe('resp_sess-1')
  })

  it('replaces the view when it is rebuilt', async () => {
    const store = new MemoryObjectStore()
    const keys = new SessionKeys('', { tenant: 't1', workspace: 'ws', sessionId: 'sess-1' })
    await writeOpenResponsesView(store, keys, EVENTS.slice(0, 2))
    const { key } = await writeOpenResponsesView(store, keys, EVENTS)
    const text = new TextDecoder().decode((await store.get(key))?.body)
    expect(text).toContain('"type":"vtcode:thread_completed"')
  })
})

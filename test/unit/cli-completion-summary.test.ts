import { describe, expect, it } from 'vitest'
import { completionSummary } from '../../cli/item-text.ts'
import type { ThreadCompletedEvent } from '../../src/contract/thread-lifecycle-events.ts'

const completed = (input: number, cached: number): ThreadCompletedEvent => ({
  type: 'thread.completed',
  thread_id: 'thread-1',
  session_id: 'session-1',
  subtype: 'success',
  outcome_code: 'success',
  usage: {
    input_tokens: input,
    cached_input_tokens: cached,
    cache_creation_tokens: 0,
    output_tokens: 96,
  },
  total_cost_usd: 0.00012,
  num_turns: 2,
})

describe('completionSummary', () => {
  it('shows how much of the input the provider read from its prompt cache', () => {
    expect(completionSummary(completed(12_800, 11_520))).toBe(
      'success · 2 model calls · 12,800 tokens in (11,520 cached), 96 out · $0.0001',
    )
  })

  it('says nothing of the cache when nothing was read from it', () => {
    expect(completionSummary(completed(812, 0))).toBe(
      'success · 2 model calls · 812 tokens in, 96 out · $0.0001',
    )
  })
})

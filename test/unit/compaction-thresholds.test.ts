import { describe, expect, it } from 'vitest'
import {
  compactionThresholds,
  type DecisionInput,
  decideCompaction,
} from '../../src/core/compaction/thresholds.ts'

describe('compaction thresholds', () => {
  it.each([
    // [configured, max_context, provider capacity] → [hard, soft]
    ['defaults: 90 % of 160k', undefined, undefined, undefined, 144_000, 129_600],
    ['a smaller provider wins', undefined, 160_000, 128_000, 115_200, 103_680],
    [
      'a larger provider is capped by max_context_tokens',
      undefined,
      160_000,
      200_000,
      144_000,
      129_600,
    ],
    ['zero capacity = unknown, ignored', undefined, 160_000, 0, 144_000, 129_600],
    ['zero max_context = unknown, provider alone', undefined, 0, 32_000, 28_800, 25_920],
    ['rounding half up', undefined, 160_000, 8_193, 7_374, 6_637],
    ['explicit threshold wins over the ratio', 50_000, 160_000, undefined, 50_000, 45_000],
    ['explicit threshold capped by the provider', 300_000, 160_000, 200_000, 200_000, 180_000],
    [
      'explicit threshold is not capped by max_context_tokens',
      170_000,
      160_000,
      undefined,
      170_000,
      153_000,
    ],
    ['explicit 0 = not set', 0, 160_000, 100_000, 90_000, 81_000],
    ['minimum 1', undefined, 1, undefined, 1, 1],
    ['odd hard: soft = hard − floor(hard/10)', 99, undefined, undefined, 99, 90],
  ] as const)('%s', (_name, configured, max, capacity, hard, soft) => {
    expect(
      compactionThresholds({
        autoCompactionThresholdTokens: configured,
        maxContextTokens: max,
        providerCapacity: capacity,
      }),
    ).toEqual({ hard, soft })
  })

  it('has no threshold when no size is known', () => {
    expect(compactionThresholds({ maxContextTokens: 0, providerCapacity: 0 })).toBeUndefined()
  })
})

describe('compaction decision', () => {
  const thresholds = { hard: 1000, soft: 900 }
  const base: DecisionInput = {
    tokens: 0,
    thresholds,
    enabled: true,
    pending: false,
    inToolLoop: false,
  }
  const decide = (input: Partial<DecisionInput>) => decideCompaction({ ...base, ...input })

  it('does nothing below the soft threshold', () => {
    expect(decide({ tokens: 899 })).toMatchObject({ action: 'none', reason: 'below_soft' })
  })

  it('marks compaction pending at the soft threshold, in or out of a tool loop', () => {
    expect(decide({ tokens: 900 })).toMatchObject({ action: 'pending', reason: 'soft_crossed' })
    expect(decide({ tokens: 999, inToolLoop: true })).toMatchObject({ action: 'pending' })
  })

  it('compacts before the next request at the hard threshold', () => {
    expect(decide({ tokens: 1000 })).toMatchObject({ action: 'now', reason: 'hard_crossed' })
  })

  it('never compacts in the middle of an active tool loop: the hard crossing is deferred', () => {
    expect(decide({ tokens: 5000, inToolLoop: true })).toMatchObject({
      action: 'pending',
      reason: 'deferred_in_tool_loop',
    })
  })

  it('runs a pending compaction at the turn boundary, even if the estimate fell back below soft', () => {
    expect(decide({ tokens: 10, pending: true })).toMatchObject({
      action: 'now',
      reason: 'pending_at_boundary',
    })
    expect(decide({ tokens: 10, pending: true, inToolLoop: true })).toMatchObject({
      action: 'pending',
      reason: 'awaiting_boundary',
    })
  })

  it('honours auto_compaction_enabled, suppression and an unknown threshold', () => {
    expect(decide({ tokens: 5000, enabled: false })).toMatchObject({
      action: 'none',
      reason: 'disabled',
    })
    expect(decide({ tokens: 5000, suppressed: true })).toMatchObject({
      action: 'none',
      reason: 'suppressed',
    })
    expect(decide({ tokens: 5000, thresholds: undefined })).toMatchObject({
      action: 'none',
      reason: 'no_threshold',
    })
  })
})

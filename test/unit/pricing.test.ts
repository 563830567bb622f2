import { describe, expect, it } from 'vitest'
import type { Usage } from '../../src/contract/usage.ts'
import { claudeModelId } from '../../src/core/model/claude-prices.ts'
import { estimateCostUsd, priceFor } from '../../src/core/model/pricing.ts'

const usage = (input: number, cached: number, output: number, creation = 0): Usage => ({
  input_tokens: input,
  cached_input_tokens: cached,
  cache_creation_tokens: creation,
  output_tokens: output,
})

describe('priceFor', () => {
  it('returns USD per token for a known model', () => {
    const price = priceFor('gpt-4o')
    expect(price?.input).toBeCloseTo(2.5e-6, 15)
    expect(price?.output).toBeCloseTo(10e-6, 15)
    expect(price?.cacheRead).toBeCloseTo(1.25e-6, 15)
  })

  it('distinguishes close model names', () => {
    expect(priceFor('gpt-5')?.input).toBeCloseTo(1.25e-6, 15)
    expect(priceFor('gpt-5-mini')?.input).toBeCloseTo(0.25e-6, 15)
    expect(priceFor('gpt-5-nano')?.output).toBeCloseTo(0.4e-6, 15)
    expect(priceFor('gpt-4.1-mini')?.output).toBeCloseTo(1.6e-6, 15)
  })

  it('resolves dated snapshots and an openai/ prefix to the base model', () => {
    expect(priceFor('gpt-4o-mini-2024-07-18')).toEqual(priceFor('gpt-4o-mini'))
    expect(priceFor('gpt-5-2025-08-07')).toEqual(priceFor('gpt-5'))
    expect(priceFor('openai/gpt-4.1')).toEqual(priceFor('gpt-4.1'))
    expect(priceFor('GPT-4.1')).toEqual(priceFor('gpt-4.1'))
  })

  it('prefers an exact snapshot entry over its base model', () => {
    expect(priceFor('gpt-4o-2024-05-13')?.input).toBeCloseTo(5e-6, 15)
    expect(priceFor('gpt-4o-2024-08-06')?.input).toBeCloseTo(2.5e-6, 15)
  })

  it('omits cacheRead where no cached price is published', () => {
    const price = priceFor('gpt-5-pro')
    expect(price).toBeDefined()
    expect(price && 'cacheRead' in price).toBe(false)
  })

  it('returns undefined for unknown models', () => {
    expect(priceFor('llama3.1:8b')).toBeUndefined()
    expect(priceFor('gpt-oss-20b')).toBeUndefined()
    expect(priceFor('ft:gpt-4o-mini:acme::abc123')).toBeUndefined()
    expect(priceFor('constructor')).toBeUndefined()
    expect(priceFor('')).toBeUndefined()
  })

  it('lets overrides win and price models the table does not know', () => {
    const overrides = {
      'llama3.1:8b': { input: 0, output: 0 },
      'gpt-4o': { input: 1e-6, output: 2e-6, cacheRead: 0.5e-6 },
    }
    expect(priceFor('llama3.1:8b', overrides)).toEqual({ input: 0, output: 0 })
    expect(priceFor('gpt-4o-2024-11-20', overrides)).toEqual(overrides['gpt-4o'])
    expect(priceFor('gpt-4.1', overrides)).toEqual(priceFor('gpt-4.1'))
  })
})

describe('estimateCostUsd (as the provider bills)', () => {
  it('prices uncached input at input, cached input at cacheRead, output at output', () => {
    const price = { input: 2.5e-6, output: 10e-6, cacheRead: 1.25e-6 }
    expect(estimateCostUsd(usage(1_000_000, 0, 0), price)).toBeCloseTo(2.5, 10)
    // 2000 uncached + 10000 cached + 800 output
    expect(estimateCostUsd(usage(12_000, 10_000, 800), price)).toBeCloseTo(
      2000 * 2.5e-6 + 10_000 * 1.25e-6 + 800 * 10e-6,
      12,
    )
    expect(estimateCostUsd(usage(12_000, 0, 800), price)).toBeCloseTo(0.038, 10)
  })

  it('prices cache writes at cacheWrite, and both at the input price when the provider has none', () => {
    const price = { input: 3e-6, output: 15e-6, cacheRead: 0.3e-6, cacheWrite: 3.75e-6 }
    // 2000 uncached, 6000 cached, 2000 written, 1000 output
    const cost = estimateCostUsd(usage(10_000, 6_000, 1_000, 2_000), price)
    expect(cost).toBeCloseTo(2000 * 3e-6 + 6000 * 0.3e-6 + 2000 * 3.75e-6 + 1000 * 15e-6, 12)
    const plain = { input: 1e-6, output: 0 }
    expect(estimateCostUsd(usage(1_000, 1_000, 0, 0), plain)).toBeCloseTo(1_000 * 1e-6, 15)
  })

  it('never counts more cached or written tokens than the input holds', () => {
    const price = { input: 1, output: 0, cacheRead: 0.1, cacheWrite: 2 }
    expect(estimateCostUsd(usage(10, 20, 0, 5), price)).toBeCloseTo(1, 12)
  })

  it('is zero for zero usage', () => {
    expect(estimateCostUsd(usage(0, 0, 0), { input: 1, output: 1 })).toBe(0)
  })
})

describe('Claude prices', () => {
  it('prices cache reads and writes apart, per Anthropic model id', () => {
    const price = priceFor('claude-sonnet-4-6')
    expect(price?.input).toBeCloseTo(3e-6, 15)
    expect(price?.cacheWrite).toBeCloseTo(3.75e-6, 15)
    expect(price?.cacheRead).toBeCloseTo(0.3e-6, 15)
    expect(price?.output).toBeCloseTo(15e-6, 15)
    expect(priceFor('claude-opus-4-1')?.input).toBeCloseTo(15e-6, 15)
    expect(priceFor('claude-opus-4-5')?.input).toBeCloseTo(5e-6, 15)
  })

  it('reads the ids of the Messages API, Bedrock, Vertex and routers alike', () => {
    for (const id of [
      'claude-sonnet-4-5-20250929',
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'anthropic.claude-sonnet-4-5-20250929-v1:0',
      'claude-sonnet-4-5@20250929',
      'anthropic/claude-sonnet-4.5',
      'Claude-Sonnet-4-5',
    ]) {
      expect(claudeModelId(id), id).toBe('claude-sonnet-4-5')
    }
    expect(priceFor('claude-sonnet-4-20250514')).toEqual(priceFor('claude-sonnet-4-0'))
    expect(priceFor('claude-3-7-sonnet-latest')).toEqual(priceFor('claude-3-7-sonnet'))
  })

  it('knows no price for a model it does not list, nor for a near name', () => {
    expect(priceFor('claude-haiku-5-5')).toBeUndefined()
    expect(priceFor('claude-sonnet-4-7')).toBeUndefined()
    expect(priceFor('claude-opus-4-10')).toBeUndefined()
  })

  it('costs a cached Claude request at the read and write rates', () => {
    const price = priceFor('claude-opus-4-7')
    if (!price) throw new Error('no price')
    // 1,000 uncached + 10,000 read + 2,000 written, 500 out.
    const cost = estimateCostUsd(usage(13_000, 10_000, 500, 2_000), price)
    expect(cost).toBeCloseTo(1_000 * 5e-6 + 10_000 * 0.5e-6 + 2_000 * 6.25e-6 + 500 * 25e-6, 12)
  })
})

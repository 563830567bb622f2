import { describe, expect, it } from 'vitest'
import type { Usage } from '../../src/contract/usage.ts'
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

import { describe, expect, it } from 'vitest'
import { randomIds } from '../../src/shared/random-ids.ts'

describe('randomIds', () => {
  it('draws 128-bit tokens as 32 hex characters, none repeated across pool refills', () => {
    // 1,000 tokens cross the 4 KiB pool's refill (256 tokens each) three times
    const tokens = Array.from({ length: 1000 }, () => randomIds.token())
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{32}$/)
    expect(new Set(tokens).size).toBe(tokens.length)
  })

  it('spells every byte value (the hex table covers 0x00–0xff)', () => {
    const pairs = new Set<string>()
    for (let i = 0; i < 2000; i++) {
      const token = randomIds.token()
      for (let at = 0; at < token.length; at += 2) pairs.add(token.slice(at, at + 2))
    }
    expect(pairs.size).toBe(256)
  })

  it('gives v4 UUIDs', () => {
    expect(randomIds.uuid()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    )
  })
})

import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/shared/sha256-hex.ts'
import { sha256HexOfText } from '../../src/shared/sha256-small.ts'

/** The hash computed on the calling thread against Web Crypto's, at every padding boundary. */
describe('sha256HexOfText', () => {
  it('is the FIPS 180-4 digest: known answers', async () => {
    expect(await sha256HexOfText('')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    )
    expect(await sha256HexOfText('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    )
    expect(await sha256HexOfText('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    )
  })

  it('equals Web Crypto’s digest for every length around a block, multi-byte text and long text', async () => {
    const texts: string[] = []
    for (let length = 0; length <= 200; length++) texts.push('x'.repeat(length))
    texts.push(
      'é😀\u0000 \uFFFD'.repeat(40),
      `{"operation":"turn","request":${'"ü"'.repeat(5000)}}`,
    )
    texts.push('y'.repeat(16 * 1024), 'y'.repeat(16 * 1024 + 1), 'z'.repeat(100_000))
    for (const text of texts) expect(await sha256HexOfText(text)).toBe(await sha256Hex(text))
  })
})

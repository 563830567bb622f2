import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { parseRankTable, rankTableEncoding } from '../../functions/entries/worker-rank-table.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

const require = createRequire(import.meta.url)
const encodings = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
}
const modules = {
  o200k_base: () => import('gpt-tokenizer/esm/bpeRanks/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/esm/bpeRanks/cl100k_base'),
}
/** The table module's source, as the Worker receives it (a Text module: wrangler.toml). */
const source = (name: EncodingName) =>
  readFile(
    require
      .resolve(`gpt-tokenizer/package.json`)
      .replace(/package\.json$/, `esm/bpeRanks/${name}.js`),
    'utf8',
  )

const SAMPLE =
  'Compaction keeps the last 10 messages; naïve café — 日本語のテキスト, emoji 🧪🚀, ' +
  'code `const x = {"a": [1, 2]}`\n\t<|endoftext|> and a long run: ' +
  'x'.repeat(300)

describe('the rank tables the Worker parses from text', () => {
  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: every rank equals gpt-tokenizer's own table, in order`, async () => {
      const parsed = parseRankTable(await source(name))
      const table = (await modules[name]()).default
      expect(parsed.length).toBe(table.length)
      const differing = parsed.findIndex(
        (rank, i) => JSON.stringify(rank) !== JSON.stringify(table[i]),
      )
      expect(differing).toBe(-1)
    })

    it(`${name}: counts like the encoding module it stands in for (Node, Deno)`, async () => {
      const fromText = rankTableEncoding(name, await source(name))
      const library = await encodings[name]()
      const plain = { disallowedSpecial: new Set<string>() }
      expect(fromText.countTokens(SAMPLE, plain)).toBe(library.countTokens(SAMPLE, plain))
      expect(fromText.countTokens(SAMPLE, plain)).toBeGreaterThan(50)
    })
  }

  it('refuses what is not a table entry', () => {
    expect(() => parseRankTable('\t"\\xZZ",')).toThrow(/bad escape/)
    expect(() => parseRankTable('\t[1, "a"],')).toThrow(/not a byte array/)
    expect(parseRankTable('const c0 = [\n\t"a\\"b",\n\t[226, 128],\n\t"\\u00e9\\n"\n];')).toEqual([
      'a"b',
      [226, 128],
      'é\n',
    ])
  })
})

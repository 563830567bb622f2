import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { rankTableFiles } from '../../functions/entries/rank-table-files.ts'
import { writeWorkerRankTables } from '../../infra/build/worker-rank-tables.mjs'
import {
  loadTokenizer,
  packagedRankTables,
  useRankTables,
} from '../../src/core/compaction/bpe-tokenizer.ts'
import { countInPieces } from '../../src/core/compaction/counting-pieces.ts'
import { readRankTable } from '../../src/core/compaction/rank-table.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'
import { tokenCorpus } from '../support/token-corpus.ts'

const ENCODINGS: EncodingName[] = ['o200k_base', 'cl100k_base']
const committed = (encoding: EncodingName) =>
  new Uint8Array(
    readFileSync(new URL(`../../src/core/compaction/rank-tables/${encoding}.bin`, import.meta.url)),
  )
const library = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
}

describe('rank tables', () => {
  for (const encoding of ENCODINGS) {
    it(`commits ${encoding}'s table as the installed gpt-tokenizer gives it (npx tsx infra/build/rank-tables.ts)`, async () => {
      expect(Buffer.from(await packagedRankTables(encoding)).equals(committed(encoding))).toBe(true)
    })
  }

  it('reads the committed tables on Node from the source tree, as the entries do', async () => {
    for (const encoding of ENCODINGS) {
      expect(Buffer.from(await rankTableFiles(encoding)).equals(committed(encoding))).toBe(true)
    }
  })

  it('computes the hash table of a table that leaves it out (the Worker’s upload) as committed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rank-tables-'))
    try {
      writeWorkerRankTables(dir)
      for (const encoding of ENCODINGS) {
        const uploaded = new Uint8Array(readFileSync(join(dir, `${encoding}.bin`)))
        expect(uploaded.length).toBeLessThan(committed(encoding).length / 2)
        const computed = readRankTable(uploaded)
        const precomputed = readRankTable(committed(encoding))
        expect(computed.mask).toBe(precomputed.mask)
        expect(
          Buffer.from(computed.slots.buffer).equals(Buffer.from(precomputed.slots.slice().buffer)),
        ).toBe(true)
        expect(computed.starts).toEqual(precomputed.starts)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses bytes that are not a table of format version 1', () => {
    const table = committed('cl100k_base')
    expect(() => readRankTable(table.subarray(0, 12))).toThrow(/not a rank table/)
    const otherVersion = table.slice()
    otherVersion[4] = 2
    expect(() => readRankTable(otherVersion)).toThrow(/format version 2/)
    expect(() => readRankTable(table.subarray(0, table.length - 1))).toThrow(/disagree/)
    const notMagic = table.slice()
    notMagic[0] = 0
    expect(() => readRankTable(notMagic)).toThrow(/not a rank table/)
  })

  it("counts long texts as gpt-tokenizer's countTokens over the same bounded pieces", async () => {
    useRankTables(rankTableFiles)
    const long = [
      tokenCorpus().join('\n'),
      readFileSync(new URL('../../docs/performance.md', import.meta.url), 'utf8'),
      'QUJD'.repeat(5000) + ' '.repeat(3000) + '日本語'.repeat(2000) + '🙂'.repeat(1000),
    ]
    for (const encoding of ENCODINGS) {
      const ours = await loadTokenizer(encoding)
      const theirs = await library[encoding]()
      const plain = { disallowedSpecial: new Set<string>() }
      for (const text of long) {
        const expected = countInPieces(text, (piece) => theirs.countTokens(piece, plain))
        expect(ours.count(text), `${encoding}, ${text.length} chars`).toBe(expected)
      }
    }
  }, 120_000)
})

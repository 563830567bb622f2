import { readFileSync } from 'node:fs'
import {
  CL100K_TOKEN_SPLIT_REGEX,
  O200K_TOKEN_SPLIT_REGEX,
} from 'gpt-tokenizer/esm/encodingParams/constants'
import { describe, expect, it } from 'vitest'
import { bpeCounter } from '../../src/core/compaction/bpe-counter.ts'
import { readRankTable } from '../../src/core/compaction/rank-table.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'
import { tokenCorpus } from '../support/token-corpus.ts'

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() }

const encodings = {
  o200k_base: {
    pattern: O200K_TOKEN_SPLIT_REGEX,
    reference: () => import('gpt-tokenizer/encoding/o200k_base'),
  },
  cl100k_base: {
    pattern: CL100K_TOKEN_SPLIT_REGEX,
    reference: () => import('gpt-tokenizer/encoding/cl100k_base'),
  },
} as const

function committedTable(encoding: EncodingName) {
  const file = new URL(`../../src/core/compaction/rank-tables/${encoding}.bin`, import.meta.url)
  return readRankTable(new Uint8Array(readFileSync(file)))
}

describe('bpe counter', () => {
  const corpus = tokenCorpus()

  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    it(`counts exactly as gpt-tokenizer's ${encoding} over a varied corpus`, async () => {
      const { pattern, reference } = encodings[encoding]
      const library = await reference()
      // A small cache, so that entries are dropped and counted again during the run.
      const counter = bpeCounter(committedTable(encoding), pattern, 64)
      expect(corpus.length).toBeGreaterThan(2000)
      const wrong: string[] = []
      for (const sample of corpus) {
        const expected = library.countTokens(sample, PLAIN_TEXT)
        if (counter.count(sample) !== expected) wrong.push(JSON.stringify(sample.slice(0, 80)))
        // counted again: from the cache, or merged again after the cache dropped it
        if (counter.count(sample) !== expected) wrong.push(`again: ${JSON.stringify(sample)}`)
      }
      expect(wrong.slice(0, 5)).toEqual([])
    }, 120_000)
  }

  it('gives a pair after a byte-order mark the rank gpt-tokenizer gives it', async () => {
    const library = await encodings.o200k_base.reference()
    const counter = bpeCounter(committedTable('o200k_base'), O200K_TOKEN_SPLIT_REGEX, 16)
    // '\ufeff名': EF BB and BF E5 … merge into bytes that gpt-tokenizer decodes (dropping the
    // BOM) and so gives the rank of '名'.
    for (const text of [
      '\ufeff名',
      '\ufeff名单',
      '\ufeffង',
      '\ufeffusing System;',
      'x\ufeffnamespace',
    ]) {
      expect(counter.count(text), JSON.stringify(text)).toBe(library.countTokens(text, PLAIN_TEXT))
    }
  })
})

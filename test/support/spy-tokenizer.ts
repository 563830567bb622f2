import { approximateTokenizer, type Tokenizer } from '../../src/ports/tokenizer.ts'

/** The approximate tokenizer, recording every text it is asked to count. */
export function spyTokenizer(): Tokenizer & { calls: string[] } {
  const calls: string[] = []
  return {
    encoding: 'approximate',
    calls,
    count(text) {
      calls.push(text)
      return approximateTokenizer.count(text)
    },
  }
}

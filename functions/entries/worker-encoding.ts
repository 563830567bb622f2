import { approximateTokenizer } from '../../src/ports/tokenizer.ts'

/**
 * Stands in for `gpt-tokenizer/encoding/*` in the Worker bundle (wrangler.toml `[alias]`): the
 * rank tables are 3.7 MB of the bundle and workerd compiles every bundled module at startup.
 * The Worker passes `approximateTokenizer` to the service, so this is only a safety net with the
 * same length heuristic.
 */
export function countTokens(text: string): number {
  return approximateTokenizer.count(text)
}

/** The stand-in keeps no merge cache. */
export function setMergeCacheSize(_size: number): void {}

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { seededRandom } from './compaction-histories.ts'

/**
 * A varied, deterministic corpus for checking a token counter against gpt-tokenizer: the
 * repository's own code and docs, and generated prose, unicode of many scripts, emoji sequences,
 * byte-order marks, lone surrogates, whitespace runs, long runs without a space, digits,
 * contractions and special-token text. Each sample is short enough for gpt-tokenizer's
 * quadratic merge.
 */
export function tokenCorpus(seed = 27): string[] {
  const random = seededRandom(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const samples: string[] = []
  for (const text of repositoryTexts()) {
    for (let at = 0; at < text.length; at += 1500) samples.push(text.slice(at, at + 1500))
  }
  const alphabets = [
    'abcdefghijklmnopqrstuvwxyz',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    '0123456789',
    ' \t\n\r\n  \u00a0\u2003\u3000\f\v',
    '.,;:!?()[]{}<>/\\|@#$%^&*-_=+~`"\'',
    'éèêëàâäçñøåæœßÉÈÀÇŒ',
    'абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГД',
    'αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔ',
    '日本語のテキスト漢字かなカナ中文字符汉语한국어텍스트',
    'العربيةعربيمرحبا',
    'हिन्दीदेवनागरीक्षत्रज्ञ',
    'ไทยภาษา',
    '\u0301\u0308\u0327\u200d\u200c\u034f',
    '🙂👍🏽👨‍👩‍👧🏳️‍🌈🇫🇷🇯🇵🤖💡🔥✨❤️‍🔥',
    '\ufeff\ufeff\ufeffusing namespace //#\n名单ង',
    '\ud800\udbff\udc00\udfff',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢𝐀𝐁𝟎𝟏\u{10ffff}\u{1f600}',
  ]
  const words = [
    'the',
    'The',
    'THE',
    'token',
    'counter',
    "don't",
    "WE'LL",
    "it's",
    "They'RE",
    'function',
    'const',
    'return',
    '=>',
    '===',
    '!==',
    '0x1f',
    '3.14159',
    '1e-9',
    'naïve',
    'café',
    '<|endoftext|>',
    '<|im_start|>',
    '<|im_end|>',
    '<|fim_prefix|>',
    '<|endofprompt|>',
    '\r\n',
    '\n\n\n',
    '    ',
    '\t\t',
    'https://example.com/a/b?c=d',
    'snake_case_name',
    'camelCaseName',
    'SCREAMING_CASE',
    '__proto__',
    '\ufeffusing',
    '\ufeff//',
    'ﬁnance',
  ]
  for (let i = 0; i < 1500; i++) {
    const parts: string[] = []
    const length = 1 + Math.floor(random() * 60)
    for (let j = 0; j < length; j++) {
      const kind = random()
      if (kind < 0.45) parts.push(pick(words))
      else if (kind < 0.9) {
        const chars = [...pick(alphabets)]
        const run = 1 + Math.floor(random() * 12)
        for (let k = 0; k < run; k++) parts.push(pick(chars))
      } else parts.push(pick([' ', '  ', '\n', ' \n ', '\t']))
    }
    samples.push(parts.join(random() < 0.5 ? ' ' : ''))
  }
  // Long runs: no space, one repeated character, base64, hex, whitespace, digits.
  const base64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  for (let i = 0; i < 60; i++) {
    const length = 50 + Math.floor(random() * 250)
    const from = (alphabet: string) =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
    samples.push(from(base64), from('0123456789abcdef'), from(' \t'), from('0123456789'))
    samples.push(pick(['a', 'z', '=', ' ', '\n', '-', '日', '🙂', '\ufeff']).repeat(length))
    samples.push(from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'))
  }
  samples.push('', ' ', '\ufeff', '\ud800', 'a', '\n', '<|endoftext|>')
  return samples
}

/** The repository's TypeScript sources and docs, a few hundred KB of code and prose. */
function repositoryTexts(): string[] {
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const texts: string[] = []
  for (const folder of ['src/core/compaction', 'src/core/model', 'docs']) {
    for (const name of readdirSync(join(root, folder))) {
      if (name.endsWith('.ts') || name.endsWith('.md')) {
        texts.push(readFileSync(join(root, folder, name), 'utf8'))
      }
    }
  }
  return texts
}

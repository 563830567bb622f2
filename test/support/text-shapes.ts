import { prose, seededRandom } from './compaction-histories.ts'

/**
 * Deterministic texts of the shapes that stress a BPE tokenizer, for tests and benches: prose,
 * random base64, base64 of sparse binary data (long runs of `A`), minified JavaScript (no spaces)
 * and a run of lowercase letters (one pre-tokenizer piece, the worst case of the library).
 */
export type TextShape = 'prose' | 'base64' | 'sparse-base64' | 'minified-js' | 'letter-run'

export const TEXT_SHAPES: readonly TextShape[] = [
  'prose',
  'base64',
  'sparse-base64',
  'minified-js',
  'letter-run',
]

export function shapedText(shape: TextShape, chars: number, seed = 1): string {
  const random = seededRandom(seed)
  switch (shape) {
    case 'prose':
      return fill(chars, () => `${prose(random, 50)}.\n`)
    case 'base64':
      return randomBase64(random, chars)
    case 'sparse-base64': {
      const bytes = new Uint8Array(Math.ceil((chars * 3) / 4))
      for (let i = 0; i < bytes.length; i++) if (random() < 0.004) bytes[i] = random() * 256
      return Buffer.from(bytes).toString('base64').slice(0, chars)
    }
    case 'minified-js':
      return fill(chars, () => minifiedStatement(random))
    case 'letter-run':
      return fill(chars, () => String.fromCharCode(97 + Math.floor(random() * 26)))
  }
}

/** `chars` characters of base64, as of random bytes. */
export function randomBase64(random: () => number, chars: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  let text = ''
  for (let i = 0; i < chars; i++) text += alphabet[Math.floor(random() * 64)]
  return text
}

function fill(chars: number, next: () => string): string {
  const parts: string[] = []
  let length = 0
  while (length < chars) {
    const part = next()
    parts.push(part)
    length += part.length
  }
  return parts.join('').slice(0, chars)
}

const KEYWORDS = ['function', 'return', 'var', 'new', 'this', 'void 0', 'null', 'typeof']
const PUNCTUATION = [
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  ';',
  ',',
  '.',
  '=',
  '===',
  '!',
  '&&',
  '||',
  '?',
  ':',
]

function identifier(random: () => number): string {
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$'
  let name = letters[Math.floor(random() * letters.length)] as string
  const extra = Math.floor(random() * 3)
  for (let i = 0; i < extra; i++) name += letters[Math.floor(random() * letters.length)]
  return name
}

/** One statement of bundler output: short names, no spaces but where the syntax needs one. */
function minifiedStatement(random: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T
  const parts: string[] = []
  const length = 4 + Math.floor(random() * 12)
  for (let i = 0; i < length; i++) {
    const roll = random()
    if (roll < 0.35) parts.push(identifier(random))
    else if (roll < 0.45) parts.push(`${pick(KEYWORDS)} `)
    else if (roll < 0.55) parts.push(String(Math.floor(random() * 1000)))
    else if (roll < 0.6) parts.push(`"${identifier(random)}-${identifier(random)}"`)
    else parts.push(pick(PUNCTUATION))
  }
  return `${parts.join('')};`
}

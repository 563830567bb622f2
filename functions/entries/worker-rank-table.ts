import { GptEncoding } from 'gpt-tokenizer/GptEncoding'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

/**
 * gpt-tokenizer's rank tables in the Worker, without compiling them at every isolate start. The
 * tables are JavaScript modules (`gpt-tokenizer/esm/bpeRanks/*_base`: an array literal of one
 * string or byte array per rank, 3.6 MB for both encodings); workerd compiles every bundled
 * module before the first request, which doubled the Worker's cold start. wrangler.toml's
 * `[[rules]]` ship those two files as Text modules instead (a string, nothing to compile), and
 * the encoding is built from that text when a count first needs it: the same ranks, the same
 * counts as on Node and Deno. Where the import gives the array itself (Node, in tests), it is
 * used as it is.
 */
export type RankTable = (string | number[])[]

/** The encoding module's counting API (what src/core/compaction/bpe-tokenizer.ts uses). */
export function rankTableEncoding(
  name: EncodingName,
  source: unknown,
): Pick<GptEncoding, 'countTokens' | 'setMergeCacheSize'> {
  const ranks = Array.isArray(source) ? (source as RankTable) : parseRankTable(String(source))
  return GptEncoding.getEncodingApi(name, () => ranks)
}

/**
 * The ranks of one table module's source, in order: a string literal per line, or a byte array
 * on one line or spread over several (`[`, one number a line, `]`).
 */
export function parseRankTable(source: string): RankTable {
  const ranks: RankTable = []
  let open: string[] | undefined
  for (const line of source.split('\n')) {
    const entry = line.trim().replace(/,$/, '')
    if (open !== undefined) {
      if (entry !== ']') open.push(entry)
      else {
        ranks.push(byteArray(`[${open.join(',')}]`))
        open = undefined
      }
    } else if (entry.startsWith('"')) ranks.push(stringLiteral(entry))
    else if (entry === '[') open = []
    else if (entry.startsWith('[') && entry.endsWith(']')) ranks.push(byteArray(entry))
  }
  if (open !== undefined) throw new Error('rank table: a byte array does not end')
  return ranks
}

function byteArray(entry: string): number[] {
  const bytes: unknown = JSON.parse(entry)
  if (!Array.isArray(bytes) || !bytes.every((b) => Number.isInteger(b))) {
    throw new Error(`rank table: not a byte array: ${entry.slice(0, 40)}`)
  }
  return bytes as number[]
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
}

/** A JavaScript double-quoted string literal (the whole entry), unescaped. */
function stringLiteral(entry: string): string {
  if (entry.length < 2 || !entry.endsWith('"')) {
    throw new Error(`rank table: not a string literal: ${entry.slice(0, 40)}`)
  }
  const body = entry.slice(1, -1)
  let text = ''
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string
    if (char !== '\\') {
      text += char
      continue
    }
    const next = body[++i] ?? ''
    if (next === 'x') {
      text += String.fromCharCode(hex(body.slice(i + 1, i + 3)))
      i += 2
    } else if (next === 'u' && body[i + 1] === '{') {
      const end = body.indexOf('}', i)
      text += String.fromCodePoint(hex(body.slice(i + 2, end)))
      i = end
    } else if (next === 'u') {
      text += String.fromCharCode(hex(body.slice(i + 1, i + 5)))
      i += 4
    } else {
      text += SIMPLE_ESCAPES[next] ?? next
    }
  }
  return text
}

function hex(digits: string): number {
  if (!/^[0-9a-fA-F]+$/.test(digits)) throw new Error(`rank table: bad escape \\${digits}`)
  return Number.parseInt(digits, 16)
}

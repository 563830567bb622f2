/** Seeded generators of hostile request parts for the HTTP fuzz tests. */

export type Rng = () => number

/** mulberry32: small, fast, reproducible from its seed. */
export function rng(seed: number): Rng {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** encodeURIComponent that survives lone surrogates (it throws on them). */
export function encodeLoose(text: string): string {
  return Array.from(text, (ch) => {
    try {
      return encodeURIComponent(ch)
    } catch {
      return '%ED%A0%80'
    }
  }).join('')
}

export const pick = <T>(r: Rng, items: readonly T[]): T =>
  items[Math.floor(r() * items.length)] as T

const int = (r: Rng, max: number) => Math.floor(r() * max)

const FIELD_NAMES = [
  'workspace',
  'model',
  'instructions',
  'tools',
  'limits',
  'harness',
  'permissions',
  'hooks',
  'metadata',
  'input',
  'prompt',
  'name',
  'api',
  'url',
  'type',
  'max_turns',
  'max_budget_usd',
  '__proto__',
  'constructor',
  '',
  ' ',
  '\u0000',
  'é',
]

const STRINGS = [
  '',
  ' ',
  '..',
  '../../etc/passwd',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  'é',
  '😀',
  '<script>',
  '%00',
  'null',
  '1e309',
  'http://169.254.169.254/',
  'ftp://x/y',
  'a'.repeat(300),
]

function randomString(r: Rng): string {
  const roll = r()
  if (roll < 0.5) return pick(r, STRINGS)
  if (roll < 0.9) {
    return Array.from({ length: int(r, 20) }, () => String.fromCharCode(int(r, 0x10000))).join('')
  }
  return 'x'.repeat(int(r, 300_000))
}

const NUMBERS = [0, -1, 1.5, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 53, 1e-300, 42]

/** A random JSON value (depth-limited), often using the API's own field names. */
export function randomJson(r: Rng, depth = 0): unknown {
  const roll = r()
  if (depth > 3 || roll < 0.3) {
    return pick(r, [null, true, false, pick(r, NUMBERS), randomString(r)] as unknown[])
  }
  if (roll < 0.5) return Array.from({ length: int(r, 4) }, () => randomJson(r, depth + 1))
  const value: Record<string, unknown> = {}
  for (let i = 0, n = 1 + int(r, 4); i < n; i++) {
    // defineProperty: a plain assignment to "__proto__" would set the prototype instead
    Object.defineProperty(value, pick(r, FIELD_NAMES), {
      value: randomJson(r, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return value
}

/** Raw body texts that are not the JSON they claim to be. */
export function randomBrokenBody(r: Rng): string | Uint8Array {
  return pick(r, [
    () => '{',
    () => '{"workspace":',
    () => "{'workspace':'a'}",
    () => '{"input":"x",}',
    () => 'NaN',
    () => '\u0000',
    () => `${'['.repeat(100_000)}`,
    () => `{"a":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`,
    () => new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]),
    () => new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
    () => new Uint8Array([0xed, 0xa0, 0x80]),
    () => `{"input":"${'y'.repeat(2 * 1024 * 1024)}"}`,
    () => JSON.stringify(randomJson(r)).slice(0, -1) || '{',
  ])()
}

/** Session ids that break the store's segment rule, percent-encoded for a URL path. */
export function randomBadId(r: Rng): string {
  return pick(r, [
    () => '%2E%2E%2Fother-tenant',
    () => '.hidden',
    () => '-dash',
    () => 'a%2Fb',
    () => 'a%5Cb',
    () => '%00',
    () => '%ZZ',
    () => 'a%20b',
    () => 'x'.repeat(129),
    () => '...',
    () => 'a..b',
    () => '%C3%A9',
    () => '%F0%9F%98%80',
    () => encodeLoose(randomString(r)).slice(0, 400) || '%2E',
    () => `ok${encodeURIComponent(pick(r, ['/', '\\', ' ', '\u0000', '..', '?', '#', 'é']))}`,
  ])()
}

export const BAD_IDEMPOTENCY_KEYS = ['', ' ', 'a b', 'x'.repeat(201), 'é', 'a/b', 'a\tb', '"q"']

export const BAD_ACCEPTS = [
  '',
  '*/*;q=abc',
  'text/event-stream;q=0',
  'image/png',
  'text/event-stream, text/event-stream',
  ',,,;;;',
  'x'.repeat(4000),
]

export const BAD_CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/jsonx',
  'json',
  '',
  ';;',
]

export function randomQuery(r: Rng, names: readonly string[]): string {
  const parts: string[] = []
  for (let i = 0, n = 1 + int(r, 3); i < n; i++) {
    const name = r() < 0.7 ? pick(r, names) : pick(r, ['x', 'after[]', '%00', 'follow', 'limit'])
    const value = pick(r, [
      '',
      '-5',
      '1.5',
      'abc',
      '1e3',
      '99999999999999999999',
      '%00',
      'yes',
      '0x10',
      'Infinity',
      encodeLoose(randomString(r).slice(0, 100)),
    ])
    parts.push(`${name}=${value}`)
  }
  return parts.join('&')
}

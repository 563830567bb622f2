/**
 * What the cross-runtime conformance run normalises before it compares transcripts, and nothing
 * else: ids made at random and timestamps. Each distinct id becomes a placeholder numbered by its
 * first appearance (`<session 1>`), so the structure (which id appears where, and which ones are
 * the same) is still compared.
 */
export const NORMALISED = [
  'session ids (`session-<UTC time>-<16 hex>`; thread ids, response ids `resp_…`, history paths contain them)',
  'UUIDs (intent ids)',
  'ISO 8601 timestamps (`2026-12-05T01:25:54.265Z`)',
  'compact timestamps in artifact names (`20261205T012556Z`), with the `-2` a second artifact made in the same second gets',
  'Unix-second `created_at` / `completed_at` numbers of Open Responses objects',
] as const

const PATTERNS: [RegExp, string][] = [
  [/session-\d{8}T\d{6}Z-[0-9a-f]{16}/g, 'session'],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'uuid'],
]
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g
const COMPACT_TIME = /\d{8}T\d{6}Z(?:-\d+)?/g
const UNIX_SECONDS = new Set(['created_at', 'completed_at'])

export function normalise(value: unknown): unknown {
  const seen = new Map<string, string>()
  const text = (input: string) => {
    let out = input
    for (const [pattern, kind] of PATTERNS) {
      out = out.replace(pattern, (id) => {
        let placeholder = seen.get(id)
        if (placeholder === undefined) {
          placeholder = `<${kind} ${[...seen.values()].filter((p) => p.startsWith(`<${kind} `)).length + 1}>`
          seen.set(id, placeholder)
        }
        return placeholder
      })
    }
    return out.replace(ISO_TIME, '<time>').replace(COMPACT_TIME, '<time>')
  }
  const walk = (node: unknown, key?: string): unknown => {
    if (typeof node === 'string') return text(node)
    if (typeof node === 'number' && key !== undefined && UNIX_SECONDS.has(key)) return '<time>'
    if (Array.isArray(node)) return node.map((item) => walk(item))
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [text(k), walk(v, k)]))
    }
    return node
  }
  return walk(value)
}

/** What a `Range` header asks of an object of `size` bytes (RFC 9110 §14, one range only). */
export type ByteRange =
  | { kind: 'whole' }
  | { kind: 'range'; start: number; end: number }
  | { kind: 'unsatisfiable' }

/**
 * Reads `bytes=a-b`, `bytes=a-` and `bytes=-n`. A header that is absent, malformed, of another
 * unit or with several ranges is ignored (the whole object), as RFC 9110 allows; a range that
 * starts past the end is unsatisfiable (416). `end` is exclusive.
 */
export function byteRange(header: string | undefined, size: number): ByteRange {
  const match = header === undefined ? null : /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim())
  const first = match?.[1] ?? ''
  const last = match?.[2] ?? ''
  if (!match || (first === '' && last === '')) return { kind: 'whole' }
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0) return { kind: 'unsatisfiable' }
    return { kind: 'range', start: Math.max(0, size - suffix), end: size }
  }
  const start = Number(first)
  if (last !== '' && Number(last) < start) return { kind: 'whole' }
  if (start >= size) return { kind: 'unsatisfiable' }
  const end = last === '' ? size : Math.min(size, Number(last) + 1)
  return { kind: 'range', start, end }
}

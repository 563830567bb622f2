/**
 * The order of object keys: by Unicode code point, which is the UTF-8 byte order S3 lists in.
 * The ObjectStore adapters that list keys themselves (memory, fs) and the session listing's
 * cursor sort by it.
 */

/** Maps a UTF-16 code unit so that comparing mapped units orders strings by code point. */
function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800
  if (unit >= 0xd800) return unit + 0x2000
  return unit
}

/** Code-point (UTF-8 byte) order; negative when `a` sorts first. */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

/**
 * The UTF-8 length of a string without encoding it: exactly what `TextEncoder` produces, a lone
 * surrogate included (it encodes as U+FFFD, 3 bytes). The one count of the code base: the wire
 * format, the store's offsets and bounds, quota reservations, compaction's byte bounds and the
 * sandbox's output previews all use it.
 */
export function utf8Length(text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

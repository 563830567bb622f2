/** Cutting captured output on UTF-8 boundaries. */

/** Drops an incomplete UTF-8 sequence at the end. */
export function backToBoundary(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.byteLength); back++) {
    const byte = bytes[bytes.byteLength - back]!
    if ((byte & 0xc0) === 0x80) continue
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return need > back ? bytes.subarray(0, bytes.byteLength - back) : bytes
  }
  return bytes
}

/** Drops continuation bytes at the start. */
export function forwardToBoundary(bytes: Buffer): Buffer {
  let at = 0
  while (at < Math.min(3, bytes.byteLength) && (bytes[at]! & 0xc0) === 0x80) at++
  return bytes.subarray(at)
}

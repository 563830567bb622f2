/**
 * Base64 (RFC 4648) on Web-standard `btoa`/`atob`, every runtime: standard and URL-safe, bytes
 * to text and back.
 */

/** The bytes of base64 text, standard or unpadded (`atob`'s alphabet; it throws on anything else). */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

/** The bytes of base64url text (`-` and `_`, padding optional). */
export function base64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  return base64Bytes(text.replaceAll('-', '+').replaceAll('_', '/'))
}

/** Standard base64 of bytes, padded. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}

/** Base64url of bytes, unpadded (JWTs, cursors, keys). */
export function toBase64url(bytes: Uint8Array): string {
  return toBase64(bytes).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

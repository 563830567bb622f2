/** The bytes of standard base64 text (`atob`'s alphabet; it throws on anything else). */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

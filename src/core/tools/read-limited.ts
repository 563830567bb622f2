import { bodyReader } from '../../shared/body-reader.ts'
import { joinBytes } from './join-bytes.ts'

/** Reads at most `limit` bytes of a response body (then cancels it) as UTF-8 text. */
export async function readLimited(
  response: Response,
  limit: number,
): Promise<{ text: string; cut: boolean }> {
  const reader = bodyReader(response)
  if (!reader) return { text: '', cut: false }
  const chunks: Uint8Array[] = []
  let size = 0
  let cut = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (size + value.byteLength > limit) {
      chunks.push(value.slice(0, limit - size))
      size = limit
      cut = true
      await reader.cancel()
      break
    }
    chunks.push(value)
    size += value.byteLength
  }
  return { text: new TextDecoder().decode(joinBytes(chunks)), cut }
}

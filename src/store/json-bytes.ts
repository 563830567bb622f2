import { TurnlineError } from '../contract/errors.ts'

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

export function toBytes(text: string): Uint8Array {
  return encoder.encode(text)
}

/** Decodes UTF-8 strictly: invalid bytes are corrupt data, not replacement characters. */
export function fromBytes(bytes: Uint8Array, what: string): string {
  try {
    return decoder.decode(bytes)
  } catch (cause) {
    throw new TurnlineError('corrupt_data', `${what} is not valid UTF-8`, { cause })
  }
}

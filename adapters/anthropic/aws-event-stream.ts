/**
 * Reader of the AWS event stream encoding (`application/vnd.amazon.eventstream`), in which
 * Bedrock streams a model's answer: binary messages of a 12-byte prelude (total length, headers
 * length, CRC-32 of those 8 bytes), typed headers, a payload and a CRC-32 of the whole message.
 * Both checksums are verified: a damaged message is a transport fault, never a wrong answer.
 */
export interface EventStreamMessage {
  /** String-valued headers (`:message-type`, `:event-type`, `:exception-type`, …). */
  headers: Record<string, string>
  payload: Uint8Array
}

export class EventStreamError extends Error {
  override readonly name = 'EventStreamError'
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (IEEE), as the event stream prelude and message checksums use. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/** Fixed sizes of header values by type (bool true/false, byte, short, int, long, -, -, timestamp, uuid). */
const FIXED_SIZE: Readonly<Record<number, number>> = {
  0: 0,
  1: 0,
  2: 1,
  3: 2,
  4: 4,
  5: 8,
  8: 8,
  9: 16,
}
const decoder = new TextDecoder()

function readHeaders(bytes: Uint8Array): Record<string, string> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headers: Record<string, string> = {}
  let at = 0
  while (at < bytes.byteLength) {
    const nameLength = view.getUint8(at)
    const name = decoder.decode(bytes.subarray(at + 1, at + 1 + nameLength))
    at += 1 + nameLength
    const type = view.getUint8(at)
    at += 1
    const fixed = FIXED_SIZE[type]
    if (fixed !== undefined) {
      at += fixed
    } else if (type === 6 || type === 7) {
      const length = view.getUint16(at)
      if (type === 7) headers[name] = decoder.decode(bytes.subarray(at + 2, at + 2 + length))
      at += 2 + length
    } else {
      throw new EventStreamError(`event stream header ${name} has unknown type ${type}`)
    }
    if (at > bytes.byteLength) throw new EventStreamError('event stream headers overrun')
  }
  return headers
}

function message(bytes: Uint8Array): EventStreamMessage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const total = view.getUint32(0)
  const headersLength = view.getUint32(4)
  if (view.getUint32(8) !== crc32(bytes.subarray(0, 8))) {
    throw new EventStreamError('event stream prelude checksum mismatch')
  }
  if (view.getUint32(total - 4) !== crc32(bytes.subarray(0, total - 4))) {
    throw new EventStreamError('event stream message checksum mismatch')
  }
  if (16 + headersLength > total) throw new EventStreamError('event stream headers overrun')
  return {
    headers: readHeaders(bytes.subarray(12, 12 + headersLength)),
    payload: bytes.subarray(12 + headersLength, total - 4),
  }
}

/** The messages of an event stream body, in order; throws EventStreamError on a damaged one. */
export async function* eventStreamMessages(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<EventStreamMessage> {
  let pending = new Uint8Array(0)
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value: chunk } = await reader.read()
      if (done) break
      const joined = new Uint8Array(pending.byteLength + chunk.byteLength)
      joined.set(pending)
      joined.set(chunk, pending.byteLength)
      pending = joined
      while (pending.byteLength >= 12) {
        const total = new DataView(pending.buffer, pending.byteOffset).getUint32(0)
        if (total < 16) throw new EventStreamError(`event stream message of ${total} bytes`)
        if (pending.byteLength < total) break
        yield message(pending.subarray(0, total))
        pending = pending.subarray(total)
      }
    }
  } finally {
    // An abandoned read (the caller stopped early) cancels the body: the connection is let go.
    void reader.cancel().catch(() => undefined)
  }
  if (pending.byteLength > 0) throw new EventStreamError('event stream ended inside a message')
}

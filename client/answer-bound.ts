import { type AnswerTooLargeDetails, TurnlineAnswerTooLargeError } from './errors.ts'

/**
 * Fails at once, the body let go, when an answer's size is said to be past `maxBytes`
 * (`declared`: a Content-Length, or an artifact's range): nothing of it is read.
 */
export async function refuseDeclared(
  body: ReadableStream<Uint8Array> | null,
  status: number,
  maxBytes: number,
  declared: number | undefined,
  details: AnswerTooLargeDetails = {},
): Promise<void> {
  if (declared === undefined || declared <= maxBytes) return
  await body?.cancel().catch(() => {})
  throw new TurnlineAnswerTooLargeError(maxBytes, status, { ...details, size: declared })
}

/**
 * Counts an answer's bytes as they arrive: the piece that passes `maxBytes` throws a
 * TurnlineAnswerTooLargeError, so nothing past the bound is held.
 */
export function byteCount(
  status: number,
  maxBytes: number,
  details: AnswerTooLargeDetails = {},
): (piece: Uint8Array) => void {
  let read = 0
  return (piece) => {
    read += piece.length
    if (read > maxBytes) throw new TurnlineAnswerTooLargeError(maxBytes, status, details)
  }
}

/**
 * A body held to `maxBytes` ({@link refuseDeclared} first): its stream errors with a
 * TurnlineAnswerTooLargeError when the byte past the bound arrives, and the rest is not read.
 */
export async function boundedBody(
  body: ReadableStream<Uint8Array> | null,
  status: number,
  maxBytes: number,
  declared: number | undefined,
  details: AnswerTooLargeDetails = {},
): Promise<ReadableStream<Uint8Array> | null> {
  await refuseDeclared(body, status, maxBytes, declared, details)
  if (!body) return null
  const count = byteCount(status, maxBytes, details)
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        try {
          count(chunk)
          controller.enqueue(chunk)
        } catch (error) {
          controller.error(error)
        }
      },
    }),
  )
}

/** `value` when it is a positive integer of bytes; else a TypeError naming `name`. */
export function positiveBytes(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`${name} must be a positive integer: ${value}`)
  }
  return value
}

/** A response's Content-Length, when it sent a valid one. */
export function declaredLength(response: Response): number | undefined {
  const header = response.headers.get('content-length')
  if (header === null || !/^\d+$/.test(header.trim())) return undefined
  return Number(header)
}

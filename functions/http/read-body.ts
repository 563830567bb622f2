import { TurnlineError } from '../../src/contract/errors.ts'
import { concatBytes } from '../../src/shared/concat-bytes.ts'
import { nestedDeeperThan } from '../../src/shared/json-depth.ts'
import { parseJson } from '../../src/shared/json-syntax.ts'

/** Bounds on a request body: read no more than `maxBytes`, and give up after `timeoutMs`. */
export interface BodyLimits {
  maxBytes: number
  timeoutMs: number
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBytes: 1024 * 1024, timeoutMs: 30_000 }

/** Deepest JSON nesting accepted; deeper documents are rejected before anything walks them. */
export const MAX_JSON_DEPTH = 64

/** Strict UTF-8 (a decoder keeps no state between whole-buffer decodes, so one serves all). */
const UTF8 = new TextDecoder('utf-8', { fatal: true })
/**
 * Strict UTF-8 that keeps a leading byte order mark: a signed body is verified as the bytes sent,
 * and the default decoder drops the BOM, so a body that begins with one failed its signature.
 */
const UTF8_AS_SENT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

const invalid = (message: string, field = 'body') =>
  new TurnlineError('invalid_input', message, { details: { field } })

const tooLarge = (maxBytes: number) =>
  new TurnlineError('payload_too_large', `request body exceeds ${maxBytes} bytes`, {
    details: { max_bytes: maxBytes },
  })

/**
 * Reads a JSON request body within the limits, checking in this order: Content-Length against
 * the cap, the bytes actually received against the cap, Content-Type, UTF-8, JSON syntax and
 * nesting depth. An empty body yields `undefined` (the route decides whether that is allowed).
 */
export async function readJsonBody(request: Request, limits: BodyLimits): Promise<unknown> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    if (!/^\d{1,15}$/.test(declared.trim())) {
      throw invalid('Content-Length is not a non-negative integer', 'header.content-length')
    }
    if (Number(declared) > limits.maxBytes) throw tooLarge(limits.maxBytes)
  }
  const bytes = await readBytes(request, limits)
  if (bytes.length === 0) return undefined
  checkContentType(request.headers.get('content-type'))
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    throw invalid('request body is not valid UTF-8')
  }
  return parseJsonDocument(text, 'request body')
}

/**
 * A JSON document received whole (a request body, a WebSocket message): its syntax and nesting
 * depth checked, errors naming `what` (`field` names the body).
 */
export function parseJsonDocument(text: string, what: string): unknown {
  const parsed = parseJson(text)
  if (!parsed.ok) throw invalid(`${what} is not valid JSON: ${parsed.reason}`)
  const value = parsed.value
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    throw invalid(`${what} is nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  return value
}

/**
 * The raw UTF-8 body within the limits (for signed bodies, verified byte for byte: its text
 * encodes back to the very bytes received, a leading BOM included).
 */
export async function readBodyText(request: Request, limits: BodyLimits): Promise<string> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limits.maxBytes) throw tooLarge(limits.maxBytes)
  const bytes = await readBytes(request, limits)
  try {
    return UTF8_AS_SENT.decode(bytes)
  } catch {
    throw invalid('request body is not valid UTF-8')
  }
}

function checkContentType(header: string | null): void {
  if (header === null) {
    throw invalid(
      'missing Content-Type: send "Content-Type: application/json"',
      'header.content-type',
    )
  }
  const [type = '', ...params] = header.split(';').map((part) => part.trim().toLowerCase())
  const json = type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)
  if (!json) {
    throw invalid(
      `Content-Type ${JSON.stringify(header.slice(0, 100))} is not supported: send application/json`,
      'header.content-type',
    )
  }
  for (const param of params) {
    const [name, value = ''] = param.split('=').map((s) => s.trim())
    if (name === 'charset' && value.replace(/"/g, '') !== 'utf-8') {
      throw invalid('only charset=utf-8 is supported', 'header.content-type')
    }
  }
}

/**
 * The body's bytes within the limits. A body of declared length within the cap is read whole
 * (`arrayBuffer()`: on Node the server reads it straight off the socket, without building a web
 * stream for it); the HTTP framing delivers no more bytes than declared, and the count is checked
 * again anyway. A body of unknown length is read chunk by chunk, and reading stops as soon as it
 * passes the cap.
 */
async function readBytes(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d{1,15}$/.test(declared.trim())) {
    if (Number(declared) > limits.maxBytes) throw tooLarge(limits.maxBytes)
    return readWhole(request, limits)
  }
  return readChunks(request, limits)
}

/** Rejects with invalid_input when `limits.timeoutMs` passes first; `stop` clears the timer. */
function bodyTimeout(limits: BodyLimits): { timeout: Promise<never>; stop: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(invalid(`request body not received within ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    )
  })
  return { timeout, stop: () => clearTimeout(timer) }
}

const unreadable = () =>
  invalid('request body could not be read (the client aborted or sent a broken stream)')

async function readWhole(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const { timeout, stop } = bodyTimeout(limits)
  const read = request.arrayBuffer()
  // A read given up on (timeout) may still fail later, when the client goes away.
  read.catch(() => {})
  let buffer: ArrayBuffer
  try {
    buffer = await Promise.race([read, timeout])
  } catch (error) {
    if (error instanceof TurnlineError) throw error
    throw unreadable()
  } finally {
    stop()
  }
  if (buffer.byteLength > limits.maxBytes) throw tooLarge(limits.maxBytes)
  return new Uint8Array(buffer)
}

async function readChunks(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const body = request.body
  if (body === null) return new Uint8Array(0)
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  const { timeout, stop } = bodyTimeout(limits)
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), timeout])
      if (done) break
      total += value.byteLength
      if (total > limits.maxBytes) throw tooLarge(limits.maxBytes)
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    if (error instanceof TurnlineError) throw error
    throw unreadable()
  } finally {
    stop()
  }
  return concatBytes(chunks, total)
}

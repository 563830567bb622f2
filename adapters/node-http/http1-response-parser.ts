import { HTTP_TOKEN, namesClose } from './http1-syntax.ts'

/** An answer's head: its status line and its header lines, names and values as sent. */
export interface ResponseHead {
  status: number
  statusText: string
  /** Name, value, name, value… in the order they came. */
  rawHeaders: string[]
  /** Whether the connection may carry another request once this answer has ended. */
  keepAlive: boolean
  /** The header's value, names compared without case; several joined with ", ". */
  header(name: string): string | undefined
}

export interface ResponseEvents {
  /** The final answer's head (1xx interim answers are skipped). */
  head(head: ResponseHead): void
  /** A piece of the body, a view of the socket's bytes. */
  data(chunk: Buffer): void
  /** The body ended as its framing says. */
  end(): void
}

/** The largest head taken, as Node's default `--max-http-header-size`. */
const MAX_HEAD = 16 * 1024
const CRLF = Buffer.from('\r\n\r\n')
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/

type Framing =
  | { kind: 'none' }
  | { kind: 'length'; left: number }
  | { kind: 'chunked'; state: 'size' | 'data' | 'data-end' | 'trailer'; left: number; line: string }
  | { kind: 'close' }

/**
 * The answer to one HTTP/1.1 request, parsed from the connection's bytes as they come: its head
 * (interim 1xx answers skipped), then its body framed as RFC 9112 says — none (a HEAD request,
 * 1xx, 204, 304), `Transfer-Encoding: chunked` (chunk extensions and trailers read and dropped),
 * `Content-Length`, or until the connection closes. What RFC 9112 and Node's parser refuse is a
 * `ProtocolError`: a malformed status or header line, a folded header line, a head over 16 KiB,
 * both a Content-Length and a Transfer-Encoding, Content-Lengths that differ, a bad chunk size.
 * Bytes after the end of the answer make the connection unfit to keep (`trailing`).
 */
export class ResponseParser {
  private buffered: Buffer | undefined
  private framing: Framing | undefined
  private done = false
  /** Bytes came after the answer's end. */
  trailing = false

  constructor(
    private readonly headRequest: boolean,
    private readonly events: ResponseEvents,
  ) {}

  /** Whether the whole answer has been read. */
  get complete(): boolean {
    return this.done
  }

  /** Whether the body runs until the connection closes. */
  get untilClose(): boolean {
    return this.framing?.kind === 'close'
  }

  push(chunk: Buffer): void {
    let bytes = chunk
    while (bytes.length > 0) {
      if (this.done) {
        this.trailing = true
        return
      }
      if (this.framing === undefined) {
        const rest = this.readHead(bytes)
        if (rest === undefined) return
        bytes = rest
        continue
      }
      bytes = this.readBody(this.framing, bytes)
    }
  }

  /** The connection closed: the end of a body that runs until then, else an answer cut short. */
  closed(): void {
    if (this.done) return
    if (this.framing?.kind === 'close') {
      this.finish()
      return
    }
    throw new ProtocolError('other side closed')
  }

  private readHead(bytes: Buffer): Buffer | undefined {
    const all = this.buffered === undefined ? bytes : Buffer.concat([this.buffered, bytes])
    const end = all.indexOf(CRLF)
    if (end === -1) {
      if (all.length > MAX_HEAD) throw new ProtocolError('the answer’s head is too large')
      this.buffered = all
      return undefined
    }
    if (end > MAX_HEAD) throw new ProtocolError('the answer’s head is too large')
    this.buffered = undefined
    const head = parseHead(all.toString('latin1', 0, end))
    const rest = all.subarray(end + 4)
    if (head.status < 200 && head.status !== 101) return rest
    this.framing = framingOf(head, this.headRequest)
    this.events.head(head)
    if (this.framing.kind === 'none') this.finish()
    return rest
  }

  private readBody(framing: Framing, bytes: Buffer): Buffer {
    if (framing.kind === 'close') {
      this.events.data(bytes)
      return EMPTY
    }
    if (framing.kind === 'length') {
      const take = Math.min(framing.left, bytes.length)
      framing.left -= take
      if (take > 0) this.events.data(take === bytes.length ? bytes : bytes.subarray(0, take))
      if (framing.left === 0) this.finish()
      return bytes.subarray(take)
    }
    if (framing.kind === 'chunked') return this.readChunked(framing, bytes)
    return bytes
  }

  private readChunked(framing: Framing & { kind: 'chunked' }, bytes: Buffer): Buffer {
    if (framing.state === 'data') {
      const take = Math.min(framing.left, bytes.length)
      framing.left -= take
      if (take > 0) this.events.data(take === bytes.length ? bytes : bytes.subarray(0, take))
      if (framing.left === 0) framing.state = 'data-end'
      return bytes.subarray(take)
    }
    // The common case, read off the bytes: a chunk's CRLF, or its size line, whole in this piece.
    if (framing.line === '') {
      if (framing.state === 'data-end' && bytes.length >= 2) {
        if (bytes[0] !== 13 || bytes[1] !== 10)
          throw new ProtocolError('a chunk longer than its size')
        framing.state = 'size'
        return bytes.subarray(2)
      }
      if (framing.state === 'size') {
        const read = chunkSize(bytes)
        if (read !== undefined) {
          framing.left = read.size
          framing.state = read.size === 0 ? 'trailer' : 'data'
          return bytes.subarray(read.next)
        }
      }
    }
    // A line: the chunk size, the CRLF after a chunk's data, or a trailer line.
    const newline = bytes.indexOf(10)
    const piece = bytes.toString('latin1', 0, newline === -1 ? bytes.length : newline + 1)
    framing.line += piece
    if (framing.line.length > MAX_HEAD) throw new ProtocolError('a chunk line is too long')
    if (newline === -1) return EMPTY
    if (!framing.line.endsWith('\r\n')) throw new ProtocolError('a chunk line without CRLF')
    const line = framing.line.slice(0, -2)
    framing.line = ''
    if (framing.state === 'data-end') {
      if (line !== '') throw new ProtocolError('a chunk longer than its size')
      framing.state = 'size'
    } else if (framing.state === 'size') {
      const size = line.split(';', 1)[0]?.trim() ?? ''
      if (!/^[0-9A-Fa-f]{1,12}$/.test(size)) throw new ProtocolError('a bad chunk size')
      framing.left = Number.parseInt(size, 16)
      framing.state = framing.left === 0 ? 'trailer' : 'data'
    } else if (line === '') {
      this.finish()
    }
    return bytes.subarray(newline + 1)
  }

  private finish(): void {
    this.done = true
    this.events.end()
  }
}

/** What the answer's bytes break: the request fails, or its body errors. */
export class ProtocolError extends Error {
  readonly code = 'HPE_INVALID'
}

const EMPTY = Buffer.alloc(0)

/**
 * A size line of hex digits and CRLF, whole at the start of `bytes`: the size and where the
 * chunk's data starts. Undefined for anything else (extensions, a line cut short), which the
 * line reader takes.
 */
function chunkSize(bytes: Buffer): { size: number; next: number } | undefined {
  let size = 0
  let at = 0
  for (; at < bytes.length && at < 12; at++) {
    const c = bytes[at] as number
    const digit =
      c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1
    if (digit === -1) break
    size = size * 16 + digit
  }
  if (at === 0 || bytes[at] !== 13 || bytes[at + 1] !== 10) return undefined
  return { size, next: at + 2 }
}

function parseHead(text: string): ResponseHead {
  const lines = text.split('\r\n')
  const status = STATUS_LINE.exec(lines[0] ?? '')
  if (status === null) throw new ProtocolError('a malformed status line')
  const rawHeaders: string[] = []
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string
    const colon = line.indexOf(':')
    const name = colon === -1 ? '' : line.slice(0, colon)
    if (!HTTP_TOKEN.test(name)) throw new ProtocolError('a malformed header line')
    rawHeaders.push(name, line.slice(colon + 1).trim())
  }
  const header = (wanted: string) => headerValue(rawHeaders, wanted)
  const connection = header('connection')?.toLowerCase() ?? ''
  const keepAlive = status[1] === '1' ? !namesClose(connection) : /keep-alive/.test(connection)
  return {
    status: Number(status[2]),
    statusText: status[3] ?? '',
    rawHeaders,
    keepAlive,
    header,
  }
}

function headerValue(raw: readonly string[], wanted: string): string | undefined {
  let value: string | undefined
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).length !== wanted.length) continue
    if ((raw[i] as string).toLowerCase() !== wanted) continue
    value = value === undefined ? (raw[i + 1] as string) : `${value}, ${raw[i + 1]}`
  }
  return value
}

function framingOf(head: ResponseHead, headRequest: boolean): Framing {
  const { status } = head
  if (headRequest || status === 101 || status === 204 || status === 304) return { kind: 'none' }
  const coding = head.header('transfer-encoding')
  const length = head.header('content-length')
  if (coding !== undefined) {
    if (length !== undefined) throw new ProtocolError('both Content-Length and Transfer-Encoding')
    const last = coding.split(',').at(-1)?.trim().toLowerCase()
    return last === 'chunked'
      ? { kind: 'chunked', state: 'size', left: 0, line: '' }
      : { kind: 'close' }
  }
  if (length !== undefined) {
    const values = new Set(length.split(',').map((v) => v.trim()))
    const [only] = values
    if (values.size !== 1 || only === undefined || !/^\d{1,15}$/.test(only)) {
      throw new ProtocolError('a bad Content-Length')
    }
    const left = Number(only)
    return left === 0 ? { kind: 'none' } : { kind: 'length', left }
  }
  return { kind: 'close' }
}

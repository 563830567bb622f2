import { BODY_READER, type BodyReader } from '../../src/shared/body-reader.ts'
import { concatBytes } from '../../src/shared/concat-bytes.ts'
import type { ResponseHead } from './http1-response-parser.ts'
import type { NodeResponseBody } from './node-response-body.ts'

/** The platform's Response, as it was when this module loaded. */
const PlatformResponse: typeof Response = globalThis.Response
const decoder = new TextDecoder()
/** The members that read (or copy) the body: refused once its own reads have taken it. */
const READS_BODY = new Set(['arrayBuffer', 'blob', 'bytes', 'clone', 'formData', 'json', 'text'])

/**
 * The Response `nodeFetch` answers: status, headers and the body's reads are its own, and it is
 * a `Response` (`instanceof`, its prototype is the platform's) whose every other member — the
 * body as a web stream, `clone`, `blob`, `formData`, `url`, `type`… — is that of a platform
 * Response made on first use over the same body. A platform Response costs a web stream (made
 * transferable), its body extraction and its checks on every answer; the model's stream and a
 * tool's output read their chunks through `BODY_READER` (src/shared/body-reader.ts) and
 * `text()`/`json()`/`arrayBuffer()` collect them, so on the turn's path neither is made.
 */
export class NodeResponse {
  readonly status: number
  readonly statusText: string
  #rawHeaders: readonly string[]
  #headers: Headers | undefined
  #body: NodeResponseBody | null
  #platform: Response | undefined
  #used = false

  constructor(body: NodeResponseBody | null, head: ResponseHead) {
    this.#body = body
    this.status = head.status
    this.statusText = head.statusText
    this.#rawHeaders = head.rawHeaders
  }

  /** The answer's headers (made on first use: most answers' are never read). */
  get headers(): Headers {
    if (this.#headers === undefined) {
      const headers = new Headers()
      const raw = this.#rawHeaders
      for (let i = 0; i + 1 < raw.length; i += 2)
        headers.append(raw[i] as string, raw[i + 1] as string)
      this.#headers = headers
    }
    return this.#headers
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300
  }

  get bodyUsed(): boolean {
    return this.#used || (this.#platform?.bodyUsed ?? false)
  }

  /** The body's reader, unless the body is gone or was taken as a stream. */
  [BODY_READER](): BodyReader | undefined {
    if (this.#body === null || this.#used || this.#platform !== undefined) return undefined
    this.#used = true
    return this.#body
  }

  text(): Promise<string> {
    if (this.#platform !== undefined && !this.#used) return this.#platform.text()
    return this.#bytes().then((bytes) => decoder.decode(bytes))
  }

  json(): Promise<unknown> {
    if (this.#platform !== undefined && !this.#used) return this.#platform.json()
    return this.text().then((text) => JSON.parse(text))
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#platform !== undefined && !this.#used) return this.#platform.arrayBuffer()
    // Bytes joined from several chunks are an array of their own; one chunk is a view of the socket's.
    return this.#bytes().then((bytes) =>
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        ? (bytes.buffer as ArrayBuffer)
        : (bytes.buffer.slice(
            bytes.byteOffset,
            bytes.byteOffset + bytes.byteLength,
          ) as ArrayBuffer),
    )
  }

  /** The platform Response over this body (made once). */
  #platformResponse(): Response {
    if (this.#platform === undefined) {
      const body = this.#body === null || this.#used ? null : this.#body.stream()
      this.#platform = new PlatformResponse(body, {
        status: this.status,
        statusText: this.statusText,
        headers: this.headers,
      })
    }
    return this.#platform
  }

  async #bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read')
    this.#used = true
    const body = this.#body
    if (body === null) return new Uint8Array(0)
    const parts: Uint8Array[] = []
    let size = 0
    for (let next = await body.read(); !next.done; next = await body.read()) {
      parts.push(next.value)
      size += next.value.byteLength
    }
    return concatBytes(parts, size)
  }

  // Every other member of the platform's Response (and of the classes it extends) is that of the
  // platform Response made on first use.
  static {
    const own = new Set(Object.getOwnPropertyNames(NodeResponse.prototype))
    for (const field of ['status', 'statusText']) own.add(field)
    const delegate = (name: string, descriptor: PropertyDescriptor) => {
      if (descriptor.get) {
        Object.defineProperty(NodeResponse.prototype, name, {
          get(this: NodeResponse) {
            return Reflect.get(this.#platformResponse(), name)
          },
          configurable: true,
        })
      } else if (typeof descriptor.value === 'function') {
        Object.defineProperty(NodeResponse.prototype, name, {
          value(this: NodeResponse, ...args: unknown[]) {
            if (this.#used && READS_BODY.has(name)) {
              const error = new TypeError('Body is unusable: Body has already been read')
              if (name === 'clone') throw error
              return Promise.reject(error)
            }
            const platform = this.#platformResponse()
            const method = Reflect.get(platform, name) as (...a: unknown[]) => unknown
            return method.apply(platform, args)
          },
          configurable: true,
          writable: true,
        })
      }
    }
    for (
      let proto: object | null = PlatformResponse.prototype;
      proto !== null && proto !== Object.prototype;
      proto = Object.getPrototypeOf(proto)
    ) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        const descriptor = Object.getOwnPropertyDescriptor(proto, name)
        if (own.has(name) || descriptor === undefined) continue
        own.add(name)
        delegate(name, descriptor)
      }
    }
    Object.setPrototypeOf(NodeResponse.prototype, PlatformResponse.prototype)
  }
}

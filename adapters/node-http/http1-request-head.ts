import { HTTP_TOKEN, namesClose } from './http1-syntax.ts'
import type { Hop } from './node-fetch-redirect.ts'

/** What a header value may not hold, as Node's HTTP client and undici refuse it. */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/

/**
 * The head of an HTTP/1.1 request for `hop`, as Node's HTTP client writes it through a kept-alive
 * agent: the request line, the caller's headers in their order, `host` (unless given) and
 * `connection: keep-alive` (unless a `connection` header is given). A method or header name that
 * is not a token, or a value with a control character (CR and LF among them), is a TypeError
 * before anything is sent. Written as latin1, as Node writes a head.
 */
export function requestHead(hop: Hop): string {
  if (!HTTP_TOKEN.test(hop.method))
    throw new TypeError(`${JSON.stringify(hop.method)} is not a method`)
  let head = `${hop.method} ${hop.url.pathname}${hop.url.search} HTTP/1.1\r\n`
  for (const name in hop.headers) {
    const value = hop.headers[name] as string
    if (!HTTP_TOKEN.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`)
    if (INVALID_VALUE.test(value)) {
      throw new TypeError(`invalid character in the value of header ${JSON.stringify(name)}`)
    }
    head += `${name}: ${value}\r\n`
  }
  if (hop.headers.host === undefined) head += `host: ${hop.url.host}\r\n`
  if (hop.headers.connection === undefined) head += 'connection: keep-alive\r\n'
  return `${head}\r\n`
}

/** Whether the request asks for its connection to be closed after the answer. */
export function closesConnection(hop: Hop): boolean {
  return namesClose(hop.headers.connection ?? '')
}

/** An HTTP token (RFC 9110 §5.6.2): what a method and a header name are made of. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** Whether a `Connection` header's value names `close` among its options (any case). */
export function namesClose(connection: string): boolean {
  return /(^|,)\s*close\s*(,|$)/i.test(connection)
}

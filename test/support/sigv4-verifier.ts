import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

/**
 * An independent check of AWS Signature Version 4 (the "Create a signed AWS API request" steps of
 * the IAM User Guide), written from the specification with node:crypto — not the signer under
 * test: the canonical request (method, the path's segments URI-encoded again, the sorted query,
 * the signed headers, the payload's SHA-256), the string to sign, the HMAC key derivation, the
 * signature. It answers why a request is refused, or undefined when its signature holds.
 */
export interface SigV4Expectation {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  region: string
  service: string
}

export interface SignedRequest {
  method: string
  /** The path as sent (percent-encoded). */
  path: string
  /** The query as sent, without `?`. */
  query: string
  /** Lowercase header names. */
  headers: Record<string, string>
  body: Uint8Array | string
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest()

const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )

function canonicalQuery(query: string): string {
  if (query === '') return ''
  return query
    .split('&')
    .map((pair) => {
      const at = pair.indexOf('=')
      const key = decodeURIComponent(at < 0 ? pair : pair.slice(0, at))
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, '%20'))
      return [rfc3986(key), rfc3986(value)] as const
    })
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join('&')
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/

/** Why the request's signature does not hold for `expected`, or undefined when it does. */
export function sigV4Problem(
  request: SignedRequest,
  expected: SigV4Expectation,
): string | undefined {
  const match = AUTHORIZATION.exec(request.headers.authorization ?? '')
  if (!match) return `no SigV4 Authorization header: ${request.headers.authorization ?? '(none)'}`
  const [, keyId, day, region, service, signedList, signature] = match as unknown as string[]
  if (keyId !== expected.accessKeyId) return `unknown access key ${keyId}`
  if (region !== expected.region) return `credential scope names region ${region}`
  if (service !== expected.service) return `credential scope names service ${service}`
  const amzDate = request.headers['x-amz-date'] ?? ''
  if (!/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== day) {
    return `x-amz-date ${amzDate} does not match the scope's day ${day}`
  }
  const signed = (signedList as string).split(';')
  for (const required of ['host', 'x-amz-date']) {
    if (!signed.includes(required)) return `${required} is not signed`
  }
  if (expected.sessionToken !== undefined) {
    if (request.headers['x-amz-security-token'] !== expected.sessionToken) {
      return 'the session token is missing or wrong'
    }
    if (!signed.includes('x-amz-security-token')) return 'the session token is not signed'
  }
  const payloadHash = sha256(request.body)
  const declared = request.headers['x-amz-content-sha256']
  if (declared !== undefined && declared !== payloadHash && declared !== 'UNSIGNED-PAYLOAD') {
    return 'x-amz-content-sha256 does not match the body'
  }
  const canonicalPath = request.path
    .split('/')
    .map((segment) => rfc3986(segment))
    .join('/')
  const canonicalHeaders = signed
    .map((name) => `${name}:${(request.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('')
  const canonicalRequest = [
    request.method,
    canonicalPath,
    canonicalQuery(request.query),
    canonicalHeaders,
    signedList,
    payloadHash,
  ].join('\n')
  const scope = `${day}/${region}/${service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n')
  const key = hmac(
    hmac(
      hmac(hmac(`AWS4${expected.secretAccessKey}`, day as string), region as string),
      service as string,
    ),
    'aws4_request',
  )
  const computed = createHmac('sha256', key).update(stringToSign).digest()
  const given = Buffer.from(signature as string, 'hex')
  return given.length === computed.length && timingSafeEqual(given, computed)
    ? undefined
    : 'the signature does not match the request'
}

import { Webhook, WebhookVerificationError } from 'standardwebhooks'

/**
 * Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, several signatures separated by
 * spaces, a five-minute timestamp tolerance) through the reference library `standardwebhooks`.
 * The library is plain JavaScript on Web-standard globals (TextEncoder, a JS SHA-256), so it
 * runs in workerd and Deno as well as on Node.
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300

/** A verified delivery: its id, and its timestamp (epoch seconds) within the tolerance. */
export type WebhookCheck =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: string }

/**
 * The library's signer/verifier for a secret: `whsec_<base64>` as Standard Webhooks defines it,
 * anything else as the raw UTF-8 bytes of the text. Throws on an unusable secret.
 */
export function webhookFor(secret: string): Webhook {
  return secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(new TextEncoder().encode(secret), { format: 'raw' })
}

/** True when the library accepts the secret (a `whsec_` secret must be non-empty base64). */
export function isUsableWebhookSecret(secret: string): boolean {
  try {
    webhookFor(secret)
    return true
  } catch {
    return false
  }
}

/**
 * A `webhook-timestamp` as signed: unix seconds in decimal digits, no sign, fraction, exponent,
 * space or leading zero. The library reads the header with `parseInt` and signs the number it
 * read, so `1700000000x` or `1700000000.9` passed with the signature of `1700000000` while the
 * header itself was not a number (the retention computed from it was NaN).
 */
const UNIX_SECONDS = /^[1-9][0-9]{0,14}$/

export function verifyStandardWebhook(input: {
  secret: string
  headers: Headers
  body: string
}): WebhookCheck {
  const headers: Record<string, string> = {}
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = input.headers.get(name)
    if (value !== null) headers[name] = value
  }
  const timestamp = headers['webhook-timestamp']
  if (timestamp !== undefined && !UNIX_SECONDS.test(timestamp)) {
    return { ok: false, reason: 'webhook-timestamp is not unix seconds' }
  }
  const signatures = headers['webhook-signature']
  if (signatures !== undefined) headers['webhook-signature'] = spaceSeparated(signatures)
  try {
    webhookFor(input.secret).verify(input.body, headers, { jsonParse: false })
    return { ok: true, id: headers['webhook-id']!, timestamp: Number(headers['webhook-timestamp']) }
  } catch (error) {
    if (error instanceof WebhookVerificationError) return { ok: false, reason: error.message }
    throw error
  }
}

/**
 * The `v1` signatures of a `webhook-signature` header, separated by spaces as the library reads
 * them. A sender puts several in one header, separated by spaces; a sender that writes them as
 * several header lines has them joined by the platform, with `, ` on Node, Deno and workerd
 * (the library reads `v1,a,` and `v1,b`) but with a bare comma by a Lambda function URL
 * (`v1,a,v1,b`: the library read only `a`). Signatures are base64, without spaces or commas, so
 * every `v1` token names the one after it. Without any, the header is left as it is.
 */
function spaceSeparated(header: string): string {
  const tokens = header.split(/[ ,]+/)
  const found: string[] = []
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (tokens[i] === 'v1') found.push(`v1,${tokens[++i]}`)
  }
  return found.length > 0 ? found.join(' ') : header
}

/** The three Standard Webhooks headers for a body: what a sender adds to its request. */
export function standardWebhookHeaders(input: {
  secret: string
  id: string
  body: string
  nowMs: number
}): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const seconds = Math.floor(input.nowMs / 1000)
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': webhookFor(input.secret).sign(
      input.id,
      new Date(seconds * 1000),
      input.body,
    ),
  }
}

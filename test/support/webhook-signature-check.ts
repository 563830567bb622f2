import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

/**
 * A receiver's own check of a Standard Webhooks signature, with node:crypto (independent of the
 * `standardwebhooks` library the server signs with): `webhook-signature` holds
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` (space-separated
 * list), keyed with the secret's UTF-8 bytes, or the base64 after `whsec_`.
 */
export function standardWebhookValid(
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
): boolean {
  const id = String(headers['webhook-id'] ?? '')
  const timestamp = String(headers['webhook-timestamp'] ?? '')
  if (id === '' || !/^\d+$/.test(timestamp)) return false
  const key = secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8')
  const expected = Buffer.from(
    createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'),
  )
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((part) => {
      if (!part.startsWith('v1,')) return false
      const given = Buffer.from(part.slice(3))
      return given.length === expected.length && timingSafeEqual(given, expected)
    })
}

/**
 * Standard Webhooks verification (webhook-id, webhook-timestamp, webhook-signature
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, several signatures separated by
 * spaces), with a timestamp tolerance. WebCrypto only.
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300

export type WebhookCheck = { ok: true; id: string } | { ok: false; reason: string }

export async function verifyStandardWebhook(input: {
  secret: string
  headers: Headers
  body: string
  nowMs: number
  toleranceSeconds?: number
}): Promise<WebhookCheck> {
  const id = input.headers.get('webhook-id')
  const timestamp = input.headers.get('webhook-timestamp')
  const signatures = input.headers.get('webhook-signature')
  if (!id || !timestamp || !signatures) {
    return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' }
  }
  if (!/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'webhook-timestamp is not a number' }
  const skew = Math.abs(input.nowMs / 1000 - Number(timestamp))
  if (skew > (input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    return { ok: false, reason: 'webhook-timestamp is outside the tolerance window' }
  }
  const expected = await sign(secretBytes(input.secret), `${id}.${timestamp}.${input.body}`)
  const matched = signatures
    .split(' ')
    .map((part) => part.split(','))
    .some(([version, value]) => version === 'v1' && value !== undefined && equal(value, expected))
  return matched ? { ok: true, id } : { ok: false, reason: 'no valid v1 signature' }
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  if (!secret.startsWith('whsec_')) return new TextEncoder().encode(secret)
  const binary = atob(secret.slice('whsec_'.length))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

async function sign(key: Uint8Array<ArrayBuffer>, content: string): Promise<string> {
  const imported = await crypto.subtle.importKey(
    'raw',
    key,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = new Uint8Array(
    await crypto.subtle.sign('HMAC', imported, new TextEncoder().encode(content)),
  )
  return btoa(String.fromCharCode(...mac))
}

/** Constant-time string comparison. */
function equal(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

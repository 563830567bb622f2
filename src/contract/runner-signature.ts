import { toHex } from '../shared/sha256-hex.ts'
import { webhookFor } from './standard-webhooks.ts'

/**
 * Signing of runner traffic in both directions (requests to the runner, exit callbacks from it)
 * with Standard Webhooks, the one scheme of every signed request Turnline sends or accepts:
 * `webhook-id: <message id>`, `webhook-timestamp: <unix seconds>`,
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` (several
 * signatures separated by spaces during a rotation), computed by the `standardwebhooks` library
 * with the secret's raw UTF-8 bytes (or a `whsec_` secret). A receiver accepts a timestamp within
 * the window and each message id once (every message has a fresh id, so honest requests never
 * repeat). The clock and the window are the caller's, so the runner and the callback route check
 * them the same way.
 */

export const ID_HEADER = 'webhook-id'
export const SIGNATURE_HEADER = 'webhook-signature'
export const TIMESTAMP_HEADER = 'webhook-timestamp'
/** Seconds a signed message stays acceptable, in either direction of clock skew. */
export const REPLAY_WINDOW_SECONDS = 300

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : decoder.decode(body)
}

/** The base64 signature (`v1,` stripped) of `<id>.<timestamp>.<body>`. */
export function signRunnerMessage(
  secret: string,
  id: string,
  timestamp: string,
  body: string | Uint8Array,
): string {
  const signed = webhookFor(secret).sign(id, new Date(Number(timestamp) * 1000), bodyText(body))
  return signed.slice('v1,'.length)
}

/** The three headers of a signed request sent now, under a fresh message id. */
export function signedHeaders(
  secret: string,
  body: string,
  nowMs: number,
  id = `msg_${newNonce()}`,
): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000))
  return {
    [ID_HEADER]: id,
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: `v1,${signRunnerMessage(secret, id, timestamp, body)}`,
  }
}

/** Remembers what was already accepted; `claim` is true only the first time for a key. */
export interface ReplayGuard {
  claim(key: string, expiresAtMs: number): boolean | Promise<boolean>
}

/** An in-process replay guard (a runner or a single-process receiver). */
export class MemoryReplayGuard implements ReplayGuard {
  readonly #seen = new Map<string, number>()
  #sweepAt = 0

  constructor(private readonly now: () => number = Date.now) {}

  claim(key: string, expiresAtMs: number): boolean {
    const now = this.now()
    if (now >= this.#sweepAt) {
      for (const [k, until] of this.#seen) if (until <= now) this.#seen.delete(k)
      this.#sweepAt = now + 10_000
    }
    const until = this.#seen.get(key)
    if (until !== undefined && until > now) return false
    this.#seen.set(key, expiresAtMs)
    return true
  }
}

export type SignatureCheck =
  | { ok: true }
  | {
      ok: false
      reason: 'missing' | 'malformed' | 'expired' | 'bad_signature' | 'replayed'
      message: string
    }

export interface SignedMessage {
  /** One secret, or several during a rotation (any may match). */
  secret: string | readonly string[]
  body: string | Uint8Array
  id: string | null | undefined
  timestamp: string | null | undefined
  signature: string | null | undefined
  nowMs: number
  windowSeconds?: number
  /** Without one, replays inside the window are not detected. */
  replay?: ReplayGuard
}

/** Checks timestamp window, signature (constant time) and replay (by message id), in that order. */
export async function verifyRunnerMessage(input: SignedMessage): Promise<SignatureCheck> {
  const { id, timestamp, signature } = input
  if (!id || !timestamp || !signature) {
    const missing = !id ? ID_HEADER : !timestamp ? TIMESTAMP_HEADER : SIGNATURE_HEADER
    return fail('missing', `missing ${missing} header`)
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    return fail('malformed', `${TIMESTAMP_HEADER} must be unix seconds`)
  }
  if (id.length > 256) return fail('malformed', `${ID_HEADER} is longer than 256 characters`)
  const given = signature
    .trim()
    .split(' ')
    .flatMap((part) => (part.startsWith('v1,') ? [part.slice(3)] : []))
  if (given.length === 0) return fail('malformed', `${SIGNATURE_HEADER} must be v1,<base64>`)
  const window = input.windowSeconds ?? REPLAY_WINDOW_SECONDS
  const skew = Math.abs(input.nowMs / 1000 - Number(timestamp))
  if (skew > window) {
    return fail('expired', `timestamp is ${Math.round(skew)} s away from now (window ${window} s)`)
  }
  let text: string
  try {
    text = bodyText(input.body)
  } catch {
    return fail('malformed', 'body is not UTF-8')
  }
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret
  const valid = secrets.some((secret) => {
    const expected = signRunnerMessage(secret, id, timestamp, text)
    return given.some((candidate) => equal(candidate, expected))
  })
  if (!valid) return fail('bad_signature', 'signature does not match')
  if (input.replay) {
    const expiresAt = (Number(timestamp) + window) * 1000 + 1000
    if (!(await input.replay.claim(id, expiresAt))) {
      return fail('replayed', 'this signed request was already received')
    }
  }
  return { ok: true }
}

/** Constant-time comparison of two strings (as bytes). */
function equal(a: string, b: string): boolean {
  const x = encoder.encode(a)
  const y = encoder.encode(b)
  if (x.length !== y.length) return false
  let diff = 0
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!
  return diff === 0
}

function fail(
  reason: Exclude<SignatureCheck, { ok: true }>['reason'],
  text: string,
): SignatureCheck {
  return { ok: false, reason, message: text }
}

/** A random nonce for a request body (128 bits, hex). */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return toHex(bytes)
}

/**
 * Signing of runner traffic in both directions (requests to the runner, exit callbacks from it):
 * `turnline-signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` and
 * `turnline-timestamp: <unix seconds>`. A receiver accepts a timestamp within the replay window
 * and each signature once (every body carries a random nonce, so honest requests never repeat).
 * WebCrypto only: the same code runs in the client, the runner and the callback route.
 */

export const SIGNATURE_HEADER = 'turnline-signature'
export const TIMESTAMP_HEADER = 'turnline-timestamp'
/** Seconds a signed message stays acceptable, in either direction of clock skew. */
export const REPLAY_WINDOW_SECONDS = 300

const encoder = new TextEncoder()

function message(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(`${timestamp}.`)
  const rest = typeof body === 'string' ? encoder.encode(body) : body
  const out = new Uint8Array(head.byteLength + rest.byteLength)
  out.set(head, 0)
  out.set(rest, head.byteLength)
  return out
}

function hmacKey(secret: string, usage: 'sign' | 'verify'): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    [usage],
  )
}

/** Hex HMAC-SHA256 of `<timestamp>.<body>`. */
export async function signRunnerMessage(
  secret: string,
  timestamp: string,
  body: string | Uint8Array,
): Promise<string> {
  const mac = await crypto.subtle.sign(
    'HMAC',
    await hmacKey(secret, 'sign'),
    message(timestamp, body),
  )
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** The two headers of a signed request sent now. */
export async function signedHeaders(
  secret: string,
  body: string,
  nowMs: number,
): Promise<Record<string, string>> {
  const timestamp = String(Math.floor(nowMs / 1000))
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: `v1=${await signRunnerMessage(secret, timestamp, body)}`,
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
  timestamp: string | null | undefined
  signature: string | null | undefined
  nowMs: number
  windowSeconds?: number
  /** Without one, replays inside the window are not detected. */
  replay?: ReplayGuard
}

/** Checks timestamp window, HMAC (constant time, via WebCrypto verify) and replay, in that order. */
export async function verifyRunnerMessage(input: SignedMessage): Promise<SignatureCheck> {
  const { timestamp, signature } = input
  if (!timestamp || !signature) {
    return fail('missing', `missing ${!timestamp ? TIMESTAMP_HEADER : SIGNATURE_HEADER} header`)
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    return fail('malformed', `${TIMESTAMP_HEADER} must be unix seconds`)
  }
  const match = /^v1=([0-9a-f]{64})$/.exec(signature.trim())
  if (!match?.[1]) return fail('malformed', `${SIGNATURE_HEADER} must be v1=<64 hex digits>`)
  const window = input.windowSeconds ?? REPLAY_WINDOW_SECONDS
  const skew = Math.abs(input.nowMs / 1000 - Number(timestamp))
  if (skew > window) {
    return fail('expired', `timestamp is ${Math.round(skew)} s away from now (window ${window} s)`)
  }
  const mac = hexBytes(match[1])
  const data = message(timestamp, input.body)
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret
  let valid = false
  for (const secret of secrets) {
    if (await crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), mac, data)) {
      valid = true
      break
    }
  }
  if (!valid) return fail('bad_signature', 'signature does not match')
  if (input.replay) {
    const expiresAt = (Number(timestamp) + window) * 1000 + 1000
    if (!(await input.replay.claim(match[1], expiresAt))) {
      return fail('replayed', 'this signed request was already received')
    }
  }
  return { ok: true }
}

function fail(
  reason: Exclude<SignatureCheck, { ok: true }>['reason'],
  text: string,
): SignatureCheck {
  return { ok: false, reason, message: text }
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

/** A random nonce for a request body (128 bits, hex). */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

import { type ExecExitCallback, ExecExitCallbackSchema } from './runner-protocol.ts'
import {
  REPLAY_WINDOW_SECONDS,
  type ReplayGuard,
  SIGNATURE_HEADER,
  type SignatureCheck,
  TIMESTAMP_HEADER,
  verifyRunnerMessage,
} from './runner-signature.ts'

export type ExitCallbackCheck =
  | { ok: true; callback: ExecExitCallback }
  | {
      ok: false
      status: 400 | 401
      message: string
      /** Why a 401: missing, malformed, expired, bad_signature or replayed. */
      reason?: Exclude<SignatureCheck, { ok: true }>['reason']
    }

/**
 * Reads the runner's exit notice (`POST /v1/runner/callback`): signature and timestamp window
 * first, then the body, then replay: each message id (the signed body's `nonce`) is accepted
 * once for as long as its signature could pass the window. A replayed or unsigned notice is a
 * 401; a signed one that does not parse is a 400. Receivers deduplicate by `exec_session_id`
 * (a runner's retries carry new nonces).
 */
export async function readExitCallback(input: {
  secret: string | readonly string[]
  body: string
  headers: Headers
  nowMs: number
  /** Keyed by message id; without one, replays inside the window are not detected. */
  replay?: ReplayGuard
}): Promise<ExitCallbackCheck> {
  const timestamp = input.headers.get(TIMESTAMP_HEADER)
  const check = await verifyRunnerMessage({
    secret: input.secret,
    body: input.body,
    timestamp,
    signature: input.headers.get(SIGNATURE_HEADER),
    nowMs: input.nowMs,
  })
  if (!check.ok) {
    return {
      ok: false,
      status: 401,
      message: `callback rejected: ${check.message}`,
      reason: check.reason,
    }
  }
  let json: unknown
  try {
    json = JSON.parse(input.body)
  } catch {
    return { ok: false, status: 400, message: 'callback body is not JSON' }
  }
  const parsed = ExecExitCallbackSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    return {
      ok: false,
      status: 400,
      message: `invalid callback: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'rejected'}`,
    }
  }
  if (input.replay) {
    // The signature was checked, so the timestamp is unix seconds within the window.
    const expiresAtMs = (Number(timestamp) + REPLAY_WINDOW_SECONDS) * 1000 + 1000
    if (!(await input.replay.claim(`nonce:${parsed.data.nonce}`, expiresAtMs))) {
      return {
        ok: false,
        status: 401,
        message: 'callback rejected: this signed message was already received',
        reason: 'replayed',
      }
    }
  }
  return { ok: true, callback: parsed.data }
}

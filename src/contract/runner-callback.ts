import { type ExecExitCallback, ExecExitCallbackSchema } from './exec-exit-callback.ts'
import {
  ID_HEADER,
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
 * Reads the runner's exit notice (`POST /v1/runner/callback`): signature, timestamp window and
 * replay first, then the body. Replay is checked by message id (`webhook-id`) for as long as the
 * signature could pass the window; give a guard every instance shares (the coordinator's). A
 * replayed or unsigned notice is a 401; a signed one that does not parse is a 400. Receivers
 * deduplicate by `exec_session_id` (retries carry new message ids).
 */
export async function readExitCallback(input: {
  secret: string | readonly string[]
  body: string
  headers: Headers
  nowMs: number
  replay?: ReplayGuard
}): Promise<ExitCallbackCheck> {
  const check = await verifyRunnerMessage({
    secret: input.secret,
    body: input.body,
    id: input.headers.get(ID_HEADER),
    timestamp: input.headers.get(TIMESTAMP_HEADER),
    signature: input.headers.get(SIGNATURE_HEADER),
    nowMs: input.nowMs,
    ...(input.replay ? { replay: input.replay } : {}),
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
  return { ok: true, callback: parsed.data }
}

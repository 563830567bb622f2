import { createHmac, randomBytes } from 'node:crypto'

export interface SignedMessage {
  body: string
  headers: Record<string, string>
}

/**
 * A body signed as Standard Webhooks prescribes (base64 HMAC-SHA256 of "<id>.<timestamp>.<body>",
 * keyed with the secret's UTF-8 bytes, or its base64 bytes after `whsec_`), computed here with
 * node:crypto rather than the library under test.
 */
export function signMessage(
  secret: string,
  body: string,
  id = `msg_${randomBytes(16).toString('hex')}`,
  timestampSeconds = Math.floor(Date.now() / 1000),
): SignedMessage {
  const key = secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8')
  const timestamp = String(timestampSeconds)
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
    },
  }
}

/** The runner's exit notice for a command of `sessionId` (tenant "local"), signed with `secret`. */
export function signedExitCallback(secret: string, sessionId: string): SignedMessage {
  const body = JSON.stringify({
    type: 'exec.exited',
    nonce: randomBytes(16).toString('hex'),
    tenant: 'local',
    session_id: sessionId,
    exec_session_id: 'run-0123456789abcdef01234567',
    request_id: `req_${randomBytes(8).toString('hex')}`,
    tool_call_id: 'call_1',
    exit_code: 0,
    total_output_bytes: 0,
    spool_path: '.vtcode/context/tool_outputs/x.txt',
    spool_complete: true,
    exited_at: Date.now(),
    attempt: 1,
  })
  return signMessage(secret, body)
}

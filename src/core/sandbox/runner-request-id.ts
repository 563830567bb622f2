import { sha256Hex } from '../../shared/sha256-hex.ts'
/**
 * The deterministic id of one runner start: the same (tenant, session, tool call) always gives
 * the same id, so a start retried after a lost reply or a crash re-attaches to the command it
 * began instead of running it twice. The invocation's item id joins the key because some
 * providers reuse tool call ids (`call_0`) from turn to turn; it is unique within a session.
 */
export async function execRequestId(key: {
  tenant: string
  sessionId: string
  toolCallId: string
  itemId?: string
}): Promise<string> {
  const text = ['turnline-exec-v1', key.tenant, key.sessionId, key.toolCallId, key.itemId ?? '']
    .map((part) => `${part.length}:${part}`)
    .join('|')
  return `req_${(await sha256Hex(text)).slice(0, 40)}`
}

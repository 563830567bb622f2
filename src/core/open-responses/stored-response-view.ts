import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import { responseRecordOf } from '../../contract/open-responses-record.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { ResponseViewOptions, StoredResponseView } from '../session-api.ts'
import { openResponsesView } from './open-responses-view.ts'

/**
 * The view of a stored response (`resp_<session id>`), to be fed the session's committed
 * events: the settings and creation second of its record, and whether its turn waits on the
 * client's function calls (then the response ended with them), and for a background response
 * the work that runs it. 404 for a session that is not a response.
 */
export async function storedResponseView(
  deps: ServiceDeps,
  ref: SessionRef,
  options: ResponseViewOptions = {},
): Promise<StoredResponseView> {
  const snapshot = await deps.sessions.open(ref)
  const state = parseEngineState(snapshot.state)
  const record = responseRecordOf(state.config)
  if (!record) {
    throw new TurnlineError('not_found', `no response resp_${ref.sessionId}`)
  }
  const finishedAt = Date.parse(snapshot.updatedAt)
  let reasoning = state.reasoning_tokens ?? undefined
  let settled = snapshot.status === 'completed'
  const view = openResponsesView(state.config, {
    sessionId: ref.sessionId,
    extensions: options.extensions ?? false,
    now: () => (snapshot.status === 'completed' ? finishedAt : Date.now()),
    reasoningTokens: () => reasoning,
  })
  const reloadReasoning = async () => {
    if (settled) return
    const now = await deps.sessions.open(ref)
    reasoning = parseEngineState(now.state).reasoning_tokens ?? undefined
    settled = now.status === 'completed'
  }
  const open = state.open_turn
  const waitingOnClient = open?.waiting?.resume.client_call_id !== undefined
  const work = record.background ? { workId: record.background.work_id } : {}
  const waited = open ? { waitUsage: open.usage } : {}
  return Object.assign(view, { waitingOnClient, reloadReasoning, ...waited }, work)
}

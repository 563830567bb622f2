import type { LoopRunState } from '../../contract/loop-state.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { loopRunNoticeKey } from './callback-notices.ts'
import { eventsUrl } from './callback-policy.ts'

/**
 * `loop.stopped`: a loop run came to its end or to a point where a person is needed. Recorded
 * in the outbox of the loop's newest step session (whose own notices — `turn.waiting`,
 * `thread.completed` — went to the same URL), keyed by its run (a run stops once), so its
 * `webhook-id` is stable: recording it again (a worker that died after it, before the run's
 * state said so) finds the same delivery, and the stop of a later run at the same session and
 * batch (paused before its first step) is a delivery of its own. A run that stopped before any
 * step had a session records it in the loop's own outbox (the same key), without `session_id`,
 * `seq` or `events_url`; `GET /v1/loops/{id}/deliveries` lists those.
 * Called before the run's state is saved stopped, so a crash in between records it again.
 */
export async function recordLoopStopped(
  deps: ServiceDeps,
  tenant: string,
  state: LoopRunState,
): Promise<void> {
  const callbacks = deps.callbacks
  const run = state.run
  const sessionId = state.current_step?.session_id ?? state.last_session_id
  if (!callbacks || !run?.stop_reason) return
  const url = state.session.callback?.url ?? callbacks.policy.defaultUrlFor(tenant)
  if (!url) return
  const ref = sessionId ? { tenant, workspace: state.workspace, sessionId } : undefined
  const snapshot = ref ? await deps.sessions.open(ref) : undefined
  const now = deps.clock.now()
  const session =
    sessionId && snapshot
      ? {
          session_id: sessionId,
          seq: Math.max(0, snapshot.nextSeq - 1),
          events_url: eventsUrl(callbacks.policy, sessionId),
        }
      : {}
  const notice = {
    type: 'loop.stopped' as const,
    timestamp: new Date(now).toISOString(),
    data: {
      ...session,
      status: run.stop_reason === 'waiting' ? ('waiting' as const) : ('terminal' as const),
      loop: {
        loop_id: state.loop_id,
        run_id: run.run_id,
        reason: run.stop_reason,
        status: state.status,
        budget_status: state.budget_status,
        step_index: state.step_index,
        total_cost_usd: state.cumulative.total_cost_usd,
        ...(run.message ? { message: run.message } : {}),
      },
    },
  }
  const key = await loopRunNoticeKey(state.loop_id, run.run_id)
  const draft = { type: 'loop.stopped' as const, notice }
  const owner = ref ?? { tenant, workspace: state.workspace, loopId: state.loop_id }
  const batch = snapshot?.lastBatch ?? 0
  await callbacks.outbox.recordKeyed(owner, { key, batch, draft }, url, now)
  await callbacks.policy.wake?.()
}

import type { CallbackNotice } from '../../contract/callback-delivery.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { WorkError, WorkRecord } from '../../contract/work-record.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { LoopStore } from '../loops/loop-store.ts'
import { eventsUrl } from './callback-policy.ts'

/** What a failed work's notice says of it: all of its record, or (unreadable) its location. */
export type FailedWork = Pick<WorkRecord, 'tenant' | 'session_id' | 'work_id' | 'kind'> &
  Partial<Pick<WorkRecord, 'loop_id' | 'source' | 'created_at' | 'attempts'>>

/** The session a failed work's notice is recorded in, and where it goes. */
interface Target {
  ref: SessionRef
  url: string
  loopId?: string
}

/**
 * `work.failed`: background work that ends failed without a turn of its own to report it — it
 * waited for its tenant's daily quota until its maximum age, was refused (a completed session, a
 * request the engine rejects), or kept faulting. Recorded in the outbox of the work's session
 * (for a loop step, of the loop's newest step session, as `loop.stopped`), keyed by the work id:
 * called before the record is retired, so a crash in between records the same notice again —
 * the same objects, the same `webhook-id` — never a second one, never none. Nothing is recorded
 * when no callback URL applies, or the session is gone (deleted with its work), or a loop has
 * no step session yet.
 */
export async function recordWorkFailed(
  deps: ServiceDeps,
  locator: SessionLocator,
  record: FailedWork,
  failure: WorkError,
): Promise<void> {
  const callbacks = deps.callbacks
  if (!callbacks) return
  const target = await targetOf(deps, locator, record)
  if (!target) return
  const snapshot = await deps.sessions.open(target.ref)
  const { ref, url } = target
  const notice: CallbackNotice = {
    type: 'work.failed',
    timestamp: failure.at,
    data: {
      session_id: ref.sessionId,
      status: 'failed',
      seq: Math.max(0, snapshot.nextSeq - 1),
      events_url: eventsUrl(callbacks.policy, ref.sessionId),
      message: `${failure.code}: ${failure.message}`,
      work: {
        work_id: record.work_id,
        ...(record.source === undefined ? {} : { source: record.source }),
        code: failure.code,
        message: failure.message,
        attempts: record.attempts ?? 0,
        ...(record.created_at === undefined ? {} : { created_at: record.created_at }),
        ...(target.loopId === undefined ? {} : { loop_id: target.loopId }),
      },
    },
  }
  const work = {
    key: record.work_id,
    workId: record.work_id,
    batch: snapshot.lastBatch,
    draft: { type: notice.type, notice },
  }
  await callbacks.outbox.recordKeyed(ref, work, url, deps.clock.now())
  await callbacks.policy.wake?.()
}

async function targetOf(
  deps: ServiceDeps,
  locator: SessionLocator,
  record: FailedWork,
): Promise<Target | undefined> {
  const defaultUrl = deps.callbacks?.policy.defaultUrlFor(record.tenant)
  try {
    if (record.kind === 'loop_step') {
      const loopId = record.loop_id ?? ''
      const { state } = await new LoopStore(deps.sessions).load(record.tenant, loopId)
      const sessionId = state.current_step?.session_id ?? state.last_session_id
      const url = state.session.callback?.url ?? defaultUrl
      if (!sessionId || !url) return undefined
      return { ref: { tenant: record.tenant, workspace: state.workspace, sessionId }, url, loopId }
    }
    const ref = await locator.locate(record.tenant, record.session_id)
    const state = parseEngineState((await deps.sessions.open(ref)).state)
    const url = state.config.callback?.url ?? defaultUrl
    return url ? { ref, url } : undefined
  } catch (error) {
    // The session or loop is gone (deleted): nobody to tell, and nothing to record it in.
    if (isTurnlineError(error, 'not_found')) return undefined
    throw error
  }
}

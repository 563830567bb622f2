import type { CallbackEventType, CallbackNotice } from '../../contract/callback-delivery.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { sha256Hex } from '../../shared/sha256-hex.ts'

/** What a committed batch says, as much as its notices need (from the writer or the batch). */
export interface CommittedBatch {
  sessionId: string
  turnId?: string
  /** Seq of `events[0]`. */
  firstSeq: number
  /** The batch's number: the call whose record ends with it names its Idempotency-Key. */
  batch?: number
  events: readonly ThreadEvent[]
  /** The engine state after the batch (or the batch's state patch: the same fields). */
  state: Readonly<Record<string, unknown>>
  committedAt: string
}

export interface NoticeDraft {
  type: CallbackEventType
  notice: CallbackNotice
}

const object = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined

/**
 * Why the turn of this batch is left open for a person, if it is: a tool call's approval, a
 * plan's, or a recorded decision the next `POST …/turns` continues. A turn that waits on a
 * running command is not reported: the runner's exit callback continues it by itself.
 */
function waitingFor(state: Readonly<Record<string, unknown>>) {
  if (state.plan_approval != null) return 'plan_approval' as const
  const open = object(state.open_turn)
  if (!open || open.waiting !== undefined) return undefined
  return open.pending_permission !== undefined ? ('approval' as const) : ('continue' as const)
}

/**
 * The Idempotency-Key of the call that committed the batch (a background run's is its 202's
 * `idempotency_key`), from the turn record the call left in the state: one that ends with this
 * batch, of this turn. Absent for a call without a key.
 */
function callKey(batch: CommittedBatch): string | undefined {
  const records = batch.state.recent_turns
  if (batch.batch === undefined || !batch.turnId || !Array.isArray(records)) return undefined
  const found = records.findLast((r: unknown) => {
    const record = object(r)
    return record?.turn_id === batch.turnId && record?.last_batch === batch.batch
  })
  const key = object(found)?.key
  return typeof key === 'string' && key !== '' ? key : undefined
}

/**
 * What a `turn.completed` reports: the turn completed (`terminal` when the thread ended with it),
 * or — ended proposing a plan that waits for approval — it answers `awaiting_approval`, so its
 * notice is `turn.waiting`.
 */
function completion(
  state: Readonly<Record<string, unknown>>,
  { threadEnds }: { threadEnds: boolean },
): [CallbackEventType, Pick<CallbackNotice['data'], 'status' | 'waiting_for'>] {
  if (!threadEnds && state.plan_approval != null) {
    return ['turn.waiting', { status: 'awaiting_approval', waiting_for: 'plan_approval' }]
  }
  return ['turn.completed', { status: threadEnds ? 'terminal' : 'completed' }]
}

/**
 * The notices of one committed batch, a pure function of it (so the writer after its commit and
 * the sweep after a crash record the same ones): `turn.completed` / `turn.failed` per such event,
 * `thread.completed` for the thread's end, and `turn.waiting` when the batch leaves the turn
 * waiting for a person and reports nothing else — or completes it proposing a plan that waits
 * for approval (the turn answers `awaiting_approval`: the notice says so, with the plan's text).
 */
export function callbackNotices(batch: CommittedBatch, eventsUrl: string): NoticeDraft[] {
  const { state } = batch
  const result =
    typeof state.last_assistant_text === 'string' ? state.last_assistant_text : undefined
  const cost = typeof state.cost_usd === 'number' ? { cost_usd: state.cost_usd } : {}
  const ends = batch.events.some((e) => e.type === 'thread.completed')
  const key = callKey(batch)
  const base = (seq: number) => ({
    session_id: batch.sessionId,
    ...(batch.turnId ? { turn_id: batch.turnId } : {}),
    ...(key === undefined ? {} : { idempotency_key: key }),
    seq,
    events_url: eventsUrl,
    ...cost,
  })
  const drafts: NoticeDraft[] = []
  const add = (type: CallbackEventType, data: CallbackNotice['data']) =>
    drafts.push({ type, notice: { type, timestamp: batch.committedAt, data } })
  batch.events.forEach((event, i) => {
    const seq = batch.firstSeq + i
    if (event.type === 'turn.completed') {
      const [type, fields] = completion(state, { threadEnds: ends })
      add(type, {
        ...base(seq),
        ...fields,
        usage: event.usage,
        ...(result === undefined ? {} : { result }),
      })
    } else if (event.type === 'turn.failed') {
      add('turn.failed', {
        ...base(seq),
        status: ends ? 'terminal' : 'failed',
        message: event.message,
        ...(event.usage ? { usage: event.usage } : {}),
      })
    } else if (event.type === 'thread.completed') {
      add('thread.completed', {
        ...base(seq),
        status: 'terminal',
        subtype: event.subtype,
        outcome_code: event.outcome_code,
        usage: event.usage,
        ...(event.result === undefined ? {} : { result: event.result }),
      })
    }
  })
  const waiting = drafts.length === 0 ? waitingFor(state) : undefined
  if (waiting) {
    add('turn.waiting', {
      ...base(batch.firstSeq + batch.events.length - 1),
      status: waiting === 'continue' ? 'waiting' : 'awaiting_approval',
      waiting_for: waiting,
    })
  }
  return drafts
}

/**
 * The notice's `webhook-id`, the same for every attempt and whoever records it: `msg_` and 32
 * hex digits of SHA-256 over tenant, session, batch and type.
 */
export async function callbackMessageId(
  tenant: string,
  sessionId: string,
  batch: number,
  type: CallbackEventType,
): Promise<string> {
  return messageIdOf(`${tenant}/${sessionId}/${batch}/${type}`)
}

/**
 * A keyed notice's `webhook-id` (`work.failed` by its work id, `loop.stopped` by its run's key):
 * the same over tenant, session and key.
 */
export function workMessageId(
  tenant: string,
  sessionId: string,
  key: string,
  type: CallbackEventType,
): Promise<string> {
  return messageIdOf(`${tenant}/${sessionId}/work/${key}/${type}`)
}

/** The key of a loop run's `loop.stopped` notice: a run stops once. */
export function loopRunNoticeKey(loopId: string, runId: string): Promise<string> {
  return hex32(`loop-run/${loopId}/${runId}`)
}

async function messageIdOf(text: string): Promise<string> {
  return `msg_${await hex32(text)}`
}

/** 32 hex digits of SHA-256 over `text`. */
async function hex32(text: string): Promise<string> {
  return (await sha256Hex(text)).slice(0, 32)
}

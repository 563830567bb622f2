import type { TurnResponse, TurnStatus } from '../../contract/api.ts'
import type { TurnRecord } from '../../contract/engine-state.ts'
import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { resolveModelSettings } from '../model/model-settings.ts'
import { writeOpenResponsesView } from '../open-responses/derived-view.ts'
import { responseSettingsOf } from '../open-responses/response-record.ts'
import type { ServiceDeps } from './service-deps.ts'
import type { TurnWriter } from './turn-writer.ts'

export interface TurnAnswer {
  response: TurnResponse
  /** The record a retried Idempotency-Key is answered from (when the turn is remembered). */
  record?: TurnRecord
  /** Highest batch committed. */
  tip: number
}

export interface TurnEnding {
  turnId: string
  status: TurnStatus
  warnings?: readonly string[]
  /** Keep the answer in the engine state's recent turn records (retries answered from there). */
  remember: boolean
}

/**
 * How every turn ends (a driven turn, a permission decision, a plan approval, a manual
 * compaction, a session end): remember its answer, commit what it wrote, then answer it. A
 * finished thread's derived views are written after the commit, best effort.
 */
export async function respond(
  deps: ServiceDeps,
  ref: SessionRef,
  writer: TurnWriter,
  ending: TurnEnding,
): Promise<TurnAnswer> {
  const { turnId, status } = ending
  const warnings = ending.warnings?.length ? { warnings: [...ending.warnings] } : {}
  const record = ending.remember
    ? writer.remember({ turn_id: turnId, status, ...warnings })
    : undefined
  await writer.commit(turnId, true)
  const events = writer.dispatcher.all()
  if (events.some((event) => event.type === 'thread.completed')) {
    await writeDerivedViews(deps, ref, writer)
  }
  return {
    response: { turn_id: turnId, status, events, next_seq: writer.snapshot.nextSeq, ...warnings },
    ...(record ? { record } : {}),
    tip: writer.snapshot.lastBatch,
  }
}

/** `derived/open-responses.jsonl` of the finished thread; best effort (it can be rebuilt). */
async function writeDerivedViews(deps: ServiceDeps, ref: SessionRef, writer: TurnWriter) {
  try {
    const events: ParsedThreadEvent[] = []
    for (let from = 0; ; ) {
      const page = await deps.sessions.readEvents(ref, from, 5000)
      events.push(...page.events.map((e) => e.line.event))
      if (page.complete || page.events.length === 0) break
      from = page.nextSeq
    }
    const model = resolveModelSettings(writer.state.config.model, deps.defaults)?.name
    await writeOpenResponsesView(
      deps.sessions.objects,
      deps.sessions.keys(ref),
      events,
      responseSettingsOf(writer.state.config, model ?? 'default'),
    )
  } catch (error) {
    ;(deps.log ?? console.warn)({
      msg: 'writing derived/open-responses.jsonl failed',
      session: ref.sessionId,
      error: String(error),
    })
  }
}

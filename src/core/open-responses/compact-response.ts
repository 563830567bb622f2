import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import {
  type CompactResource,
  encodeCompaction,
  type ResponsesCompactRequest,
} from '../../contract/open-responses-compaction.ts'
import { toResponseRun } from '../../contract/open-responses-run.ts'
import { SessionImages } from '../../store/session-images.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { compactSession } from '../compaction/manual-compaction.ts'
import { admitStep } from '../engine/admit-step.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { userMessageOf } from '../model/image-input.ts'
import { parseConfig, startSession } from '../session/create-session.ts'
import { deleteSession } from '../session/delete-session.ts'
import type { TurnOptions } from '../session-api.ts'
import { userContent } from './response-input-items.ts'
import { toOpenUsage } from './response-resource.ts'
import { previousTranscript } from './response-run.ts'

/**
 * `POST /v1/responses/compact`: the conversation (the previous response's whole conversation,
 * then `input`) becomes the transcript of a new session, which is compacted as
 * `POST /v1/sessions/{id}/compact` compacts a session (trigger `manual`, one summary call); the
 * compacted transcript is the answer, and the session is erased. Nothing is kept. Stopped
 * before the platform's timeout, the compaction answers 409 (manual-compaction.ts
 * `compactionOutOfTime`), the session erased all the same.
 */
export function compactResponse(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: ResponsesCompactRequest,
  /** The platform's bound on the request (Lambda): its start hooks and compaction stop before it. */
  { timeLeft }: Pick<TurnOptions, 'timeLeft'> = {},
): Promise<CompactResource> {
  return admitStep(deps, tenant, undefined, async () => {
    const run = toResponseRun(
      {
        ...(request.model == null ? {} : { model: request.model }),
        ...(request.instructions == null ? {} : { instructions: request.instructions }),
        input: request.input ?? [],
      },
      Math.floor(Date.now() / 1000),
    )
    const earlier =
      request.previous_response_id && !run.compacted
        ? await previousTranscript(deps, locator, tenant, request.previous_response_id)
        : []
    const history: HistoryMessage[] = [
      ...earlier,
      ...run.history,
      ...(run.input === undefined ? [] : [userMessageOf(run.input, undefined)]),
    ]
    if (history.length === 0) {
      throw new TurnlineError(
        'invalid_input',
        'nothing to compact: send input items or a previous_response_id',
        { details: { field: 'body.input' } },
      )
    }
    const config = parseConfig(run.config)
    const seed = { source: 'startup' as const, history, timeLeft }
    const ref = await startSession(deps, locator, tenant, config, seed)
    try {
      await compactSession(deps, ref, {}, timeLeft ? { timeLeft } : {})
      return await compactedResource(deps, ref)
    } finally {
      await deleteSession(deps, locator, tenant, ref.sessionId)
    }
  })
}

/** The compacted transcript of the compaction's session, as the answer frames it. */
async function compactedResource(deps: ServiceDeps, ref: SessionRef): Promise<CompactResource> {
  const snapshot = await deps.sessions.open(ref)
  const images = new SessionImages(deps.sessions.objects, deps.sessions.keys(ref).root)
  const messages = await images.loadMessages(snapshot.history)
  const id = `cmp_${ref.sessionId}`
  const kept = messages.flatMap((message) => (message.role === 'user' ? [message] : []))
  return {
    id,
    object: 'response.compaction',
    output: [
      ...kept.map((message, n) => ({
        type: 'message' as const,
        id: `msg_${n}_${ref.sessionId}`,
        status: 'completed' as const,
        role: 'user' as const,
        content: userContent(message),
      })),
      { type: 'compaction', id, encrypted_content: encodeCompaction(messages) },
    ],
    created_at: Math.floor(Date.now() / 1000),
    usage: toOpenUsage(parseEngineState(snapshot.state).usage),
  }
}

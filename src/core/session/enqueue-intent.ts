import type { IntentRequest, IntentResponse } from '../../contract/api.ts'
import { TurnlineError } from '../../contract/errors.ts'
import { DEFAULT_INTENT_CAPACITY, type QueuedIntent } from '../../ports/coordinator.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completedError } from '../engine/turn-replay.ts'
import { coordinatorId } from '../engine/with-lease.ts'
import { inputKeeping, keepLongInput } from '../turn/kept-input.ts'

/**
 * `POST …/intents`: a steering follow-up queued for the next turn boundary (at most
 * DEFAULT_INTENT_CAPACITY pending, else 409 `follow_up_queue_full`). A text over the inline limit
 * (`TURNLINE_TOOL_MAX_RESPONSE_BYTES`) is kept whole as an artifact of the session as it is
 * accepted, the way a turn's long input is (src/core/turn/kept-input.ts): the queue, the record
 * of the turn that applies it, the transcript and every model request hold its preview, which
 * names the artifact; the queued intent carries the reference (`artifacts`). A long text is
 * refused before anything is kept when the queue is full already.
 */
export async function enqueueIntent(
  deps: ServiceDeps,
  ref: SessionRef,
  request: IntentRequest,
): Promise<IntentResponse> {
  const manifest = await deps.sessions.manifest(ref)
  if (manifest.status === 'completed') throw completedError(ref)
  const id = deps.ids.uuid()
  const queue = coordinatorId(ref)
  const long = utf8Length(request.text) > deps.tools.maxResponseBytes
  if (long && (await deps.coordinator.pendingIntents(queue)).length >= DEFAULT_INTENT_CAPACITY) {
    throw queueFull(DEFAULT_INTENT_CAPACITY)
  }
  const intent: QueuedIntent = { id, text: request.text }
  if (long) {
    const kept = await keepLongInput(request.text, inputKeeping(deps, ref))
    intent.text = String(kept.input)
    if (kept.artifacts.length) intent.artifacts = kept.artifacts
  }
  const result = await deps.coordinator.enqueueIntent(queue, intent, DEFAULT_INTENT_CAPACITY)
  if (result.status === 'full') throw queueFull(result.capacity)
  return { id, pending: result.pending }
}

function queueFull(capacity: number): TurnlineError {
  return new TurnlineError(
    'follow_up_queue_full',
    `follow-up intent queue is full (capacity ${capacity}); retry after the next turn`,
    { details: { capacity } },
  )
}

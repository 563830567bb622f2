import { TurnlineError } from '../../contract/errors.ts'
import { RESPONSE_RECORD_KEY, withBackgroundWork } from '../../contract/open-responses-record.ts'
import type { ResponseRunRequest } from '../../contract/open-responses-run.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { withConversationDigest } from '../open-responses/conversation-digest.ts'
import { openResponseSession, responseSessionIdOf } from '../open-responses/response-run.ts'
import { parseConfig } from '../session/create-session.ts'
import type { QueuedWork } from './background-api.ts'
import { ranExec } from './exec-session.ts'
import { queueWork, serverKey, workIdOf } from './queue-work.ts'

/**
 * `POST /v1/responses` with `background: true`: the response's session is created now (its
 * response record names the work, so `GET /v1/responses/{id}` can say `queued`) and its one turn
 * is recorded as background work under the request's Idempotency-Key (or one the server makes:
 * responseRecord), which a worker runs like any background turn — exactly once, taken over after
 * a crash.
 */
export async function queueResponse(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  tenant: string,
  request: ResponseRunRequest & { idempotencyKey: string },
): Promise<QueuedWork> {
  const key = request.idempotencyKey
  const run = await recordedRun(request)
  const { ref, input } = await openResponseSession(deps, locator, tenant, {
    ...request,
    run,
    idempotencyKey: key,
  })
  return queueWork(deps, queue, {
    tenant,
    sessionId: ref.sessionId,
    idempotencyKey: key,
    request: input === undefined ? {} : { input },
    source: 'responses',
  })
}

/**
 * The key a background response is recorded under (the server makes one without an
 * Idempotency-Key) and the record it makes, named before: its session derives from the key.
 */
export async function responseRecord(deps: Pick<ServiceDeps, 'ids'>, request: ResponseRunRequest) {
  const idempotencyKey = request.idempotencyKey ?? serverKey(deps)
  return { sessionId: await responseSessionIdOf(idempotencyKey), idempotencyKey }
}

/**
 * The answer of a keyed background response that already ran (or is running: its turn is the
 * session's open one), `duplicate`, recording nothing (a record written again would only replay
 * it, or fail a changed request when it ran), at the pending cap or not: the route then answers
 * the response as it stands. Other settings or another input under the key are 422 at once.
 */
export async function ranResponse(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  request: ResponseRunRequest & { idempotencyKey: string },
  sessionId: string,
): Promise<QueuedWork | undefined> {
  const run = await recordedRun(request)
  const input = run.input
  return ranExec(deps, locator, {
    tenant,
    sessionId,
    key: request.idempotencyKey,
    config: parseConfig(run.config),
    request: input === undefined ? {} : { input },
  })
}

/** The response's run as its session is created: its record names the work of its key. */
async function recordedRun(request: ResponseRunRequest & { idempotencyKey: string }) {
  const raw = request.run.config.metadata?.[RESPONSE_RECORD_KEY]
  if (raw === undefined) throw new TurnlineError('internal', 'a response run without its record')
  const metadata = {
    ...request.run.config.metadata,
    [RESPONSE_RECORD_KEY]: withBackgroundWork(raw, await workIdOf(request.idempotencyKey)),
  }
  return withConversationDigest({ ...request.run, config: { ...request.run.config, metadata } })
}

import { TurnlineError } from '../../contract/errors.ts'
import { RESPONSE_RECORD_KEY, withBackgroundWork } from '../../contract/open-responses-record.ts'
import type { ResponseRunRequest } from '../../contract/open-responses-run.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { openResponseSession, responseSessionIdOf } from '../open-responses/response-run.ts'
import type { QueuedWork } from './background-api.ts'
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
  const raw = request.run.config.metadata?.[RESPONSE_RECORD_KEY]
  if (raw === undefined) throw new TurnlineError('internal', 'a response run without its record')
  const metadata = {
    ...request.run.config.metadata,
    [RESPONSE_RECORD_KEY]: withBackgroundWork(raw, await workIdOf(key)),
  }
  const run = { ...request.run, config: { ...request.run.config, metadata } }
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

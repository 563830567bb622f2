import { TurnlineError } from '../../src/contract/errors.ts'
import type { LoopRunStarted, QueuedWork } from '../../src/core/session-api.ts'
import type { RouteContext } from './app-context.ts'
import { jsonResponse } from './json-response.ts'

type Worker = NonNullable<RouteContext['background']>

/** A loop run needs a worker: where none runs (docs/deploy/README.md#runtime-matrix) it is 409. */
export function requireWorker(ctx: RouteContext): Worker {
  if (ctx.background) return ctx.background
  throw new TurnlineError(
    'conflict',
    'this deployment runs no background worker (docs/deploy/README.md#runtime-matrix): step the loop with POST /v1/loops/{id}/step',
    { retryable: false, details: { reason: 'no_background_worker' } },
  )
}

/** Rings the worker's bell for the run's step record. */
export async function wakeRun(tenant: string, work: QueuedWork, worker: Worker): Promise<void> {
  await worker.wake({ tenant, session_id: work.session_id, work_id: work.work_id })
}

/** 202 for a run started (or running): the run, its step's status, the loop (`Location`). */
export function acceptedLoopRun(loopId: string, run: LoopRunStarted): Response {
  const loop = `/v1/loops/${encodeURIComponent(loopId)}`
  const body = {
    loop_id: loopId,
    run_id: run.loop.run?.run_id ?? '',
    work_id: run.work.work_id,
    duplicate: run.duplicate,
    status: run.loop.run?.state ?? 'running',
    links: { status: `${loop}/work/${run.work.work_id}`, loop },
  }
  return jsonResponse(JSON.stringify(body), 202, { location: loop })
}

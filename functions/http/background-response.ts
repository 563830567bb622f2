import { TurnlineError } from '../../src/contract/errors.ts'
import { endsResponseRun, type ResponseRunRequest } from '../../src/contract/open-responses-run.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { OpenResponsesView, StoredResponseView } from '../../src/core/session-api.ts'
import type { RouteContext } from './app-context.ts'
import { jsonResponse } from './json-response.ts'

/** The response resource (the view types it `object`): the fields read and overlaid here. */
type Resource = { status?: unknown } & Record<string, unknown>
type StoredView = OpenResponsesView & { waitingOnClient: boolean; workId?: string }

const PAGE = 1000

/**
 * `background: true` (OpenAI's background mode): the response's session is created and its turn
 * recorded for the worker; the answer is the response resource at once, `queued`. Where no
 * worker runs it is 400: the client streams instead. Not together with `stream`, nor with
 * `store: false` (as OpenAI: a background response is kept to be polled).
 */
export async function backgroundResponse(
  ctx: RouteContext,
  tenant: string,
  call: ResponseRunRequest,
  asked: { stream: boolean; store: boolean | null | undefined },
): Promise<Response> {
  const worker = ctx.background
  if (asked.store === false) {
    throw new TurnlineError(
      'invalid_input',
      'background responses are stored: not with store: false',
      {
        details: { field: 'body.store' },
      },
    )
  }
  if (!worker || asked.stream) {
    throw new TurnlineError(
      'invalid_input',
      worker
        ? 'background and stream together are not supported: create it in the background, then stream GET /v1/responses/{id}?stream=true'
        : 'background responses need a server that runs a background worker (docs/deploy/README.md#runtime-matrix): stream the response instead',
      { details: { field: 'body.background' } },
    )
  }
  const queued = await ctx.api.queueResponse(tenant, call)
  await worker.wake({ tenant, session_id: queued.session_id, work_id: queued.work_id })
  const view = await ctx.api.storedResponseView(tenant, queued.session_id)
  const resource = await resourceOf(ctx, tenant, queued.session_id, view)
  return json(resource)
}

/**
 * The status a background response has beyond its events: `queued` while its work waits for a
 * worker, `failed` when the work cannot run (with why), `cancelled` once its thread ended so.
 */
export async function backgroundStatus(
  ctx: RouteContext,
  tenant: string,
  sessionId: string,
  view: StoredView,
  end: { ended: boolean; subtype?: string },
): Promise<Resource | undefined> {
  const response = view.response as Resource | undefined
  if (!response) return undefined
  if (end.subtype === 'cancelled') return { ...response, status: 'cancelled' }
  if (end.ended || view.workId === undefined || response.status !== 'in_progress') return response
  const work = await ctx.api.workStatus(tenant, sessionId, view.workId).catch(() => undefined)
  // Work waiting for the tenant's quota has not started: to a Responses client it is queued.
  if (work?.state === 'queued' || work?.state === 'waiting')
    return { ...response, status: 'queued' }
  if (work?.state === 'failed') {
    const message = work.error ? `${work.error.code}: ${work.error.message}` : 'the run failed'
    return { ...response, status: 'failed', error: { code: 'server_error', message } }
  }
  return response
}

/**
 * `POST /v1/responses/{id}/cancel`: ends a background response's session as cancelled (a turn
 * running stops at its next model event); answers the resource, `cancelled`. A response created
 * without `background` is 400, as OpenAI answers; one that ended already is 409.
 */
export async function cancelResponse(
  ctx: RouteContext,
  tenant: string,
  sessionId: string,
): Promise<Response> {
  const before = await ctx.api.storedResponseView(tenant, sessionId)
  if (before.workId === undefined) {
    throw new TurnlineError(
      'invalid_input',
      'only responses created with background: true can be cancelled',
      {
        details: { field: 'path.id' },
      },
    )
  }
  await ctx.api.cancel(tenant, sessionId)
  const view = await ctx.api.storedResponseView(tenant, sessionId)
  const resource = await resourceOf(ctx, tenant, sessionId, view)
  return json({ ...resource, status: 'cancelled' })
}

/** The resource rebuilt from every committed event, with its background status. */
async function resourceOf(
  ctx: RouteContext,
  tenant: string,
  sessionId: string,
  view: StoredResponseView,
): Promise<Resource> {
  let after = -1
  let subtype: string | undefined
  for (;;) {
    const page = await ctx.api.readEvents(tenant, sessionId, after, PAGE)
    if (page.events.some((e) => endsResponseRun(e.line.event as ThreadEvent))) {
      await view.reloadReasoning()
    }
    for (const entry of page.events) {
      const event = entry.line.event as ThreadEvent
      if (event.type === 'thread.completed') subtype = event.subtype
      view.events(event)
    }
    after = page.nextSeq - 1
    if (page.complete) break
  }
  const end = { ended: subtype !== undefined, ...(subtype ? { subtype } : {}) }
  const resource = await backgroundStatus(ctx, tenant, sessionId, view, end)
  if (!resource) throw new TurnlineError('internal', 'the response has no events')
  return resource
}

function json(body: unknown): Response {
  return jsonResponse(JSON.stringify(body))
}

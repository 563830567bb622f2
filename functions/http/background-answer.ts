import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { QueuedWork } from '../../src/core/session-api.ts'
import type { RouteContext } from './app-context.ts'
import { jsonResponse } from './json-response.ts'

/**
 * Whether a `Prefer` header (RFC 7240) asks for `token`: one of its comma-separated
 * preferences, any case, with or without parameters (`respond-async; foo=bar`).
 */
export function prefers(prefer: string | undefined, token: string): boolean {
  if (!prefer) return false
  return prefer
    .split(',')
    .some((preference) => preference.split(';')[0]?.trim().toLowerCase() === token)
}

/** Whether a `Prefer` header asks for `respond-async`. */
export function prefersAsync(prefer: string | undefined): boolean {
  return prefers(prefer, 'respond-async')
}

/** Where the status of a background turn is served. */
export function workStatusPath(sessionId: string, workId: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}/work/${workId}`
}

/**
 * Rings the worker's bell for a recorded turn and answers 202: the work, its links, `Location`
 * of its status and `Preference-Applied: respond-async`. A duplicate is woken too (a retry of a
 * request whose first worker died is how it gets going again at once; a finished one replays).
 */
export function acceptedWork(
  tenant: string,
  queued: QueuedWork,
  trigger: NonNullable<RouteContext['background']>,
): Promise<Response> {
  const status = workStatusPath(queued.session_id, queued.work_id)
  const events = `/v1/sessions/${encodeURIComponent(queued.session_id)}/events`
  return accepted(tenant, queued, trigger, {
    ...queued,
    status: 'queued',
    links: { status, events },
  })
}

/** A loop step recorded: the same 202, its status under the loop, a link to the loop. */
export function acceptedLoopStep(
  tenant: string,
  loopId: string,
  queued: QueuedWork,
  trigger: NonNullable<RouteContext['background']>,
): Promise<Response> {
  const loop = `/v1/loops/${encodeURIComponent(loopId)}`
  const { session_id: _folder, ...work } = queued
  const links = { status: `${loop}/work/${queued.work_id}`, loop }
  return accepted(tenant, queued, trigger, { loop_id: loopId, ...work, status: 'queued', links })
}

async function accepted(
  tenant: string,
  queued: QueuedWork,
  trigger: NonNullable<RouteContext['background']>,
  body: { links: { status: string } & Record<string, string> } & Record<string, unknown>,
): Promise<Response> {
  const at: WorkLocation = { tenant, session_id: queued.session_id, work_id: queued.work_id }
  await trigger.wake(at)
  const status = body.links.status
  return jsonResponse(JSON.stringify(body), 202, {
    location: status,
    'preference-applied': 'respond-async',
    vary: 'Prefer',
  })
}

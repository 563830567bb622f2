import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import { listAll } from '../../store/list-all.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import { assertSegment, workspaceSessionsPrefix } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { deleteSession } from './delete-session.ts'

/**
 * `DELETE /v1/workspaces/:workspace`: erases a tenant's workspace — every session of it, each
 * as `DELETE /v1/sessions/:id` does (its lease held, its log fenced, its coordinator state
 * forgotten), then every other object of the workspace folder (durable artifacts, exports
 * written into it). A session whose turn runs is left as it is and the call answers 409
 * `session_busy` once the others are gone; the next call finishes. The deleted sessions'
 * markers stay (delete-fence.ts). A workspace with nothing in it is 404.
 */
export async function deleteWorkspace(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  workspace: string,
): Promise<void> {
  assertSegment('workspace', workspace)
  const { objects } = deps.sessions
  const folder = `${deps.sessions.tenantRoot(tenant)}${workspace}/`
  const everything = await listAll(objects, folder)
  if (everything.objects.length === 0) {
    throw new TurnlineError('not_found', `workspace ${workspace} not found`)
  }
  const sessionsRoot = workspaceSessionsPrefix(deps.sessions.prefix, tenant, workspace)
  const { prefixes } = await listAll(objects, sessionsRoot, { delimiter: '/' })
  let busy: TurnlineError | undefined
  for (const sessionId of prefixes.map((p) => p.slice(sessionsRoot.length, -1))) {
    try {
      await deleteSession(deps, locator, tenant, sessionId)
    } catch (error) {
      // A deleted session's marker folder, or a folder of another workspace's id: nothing here.
      if (isTurnlineError(error, 'not_found') || isTurnlineError(error, 'invalid_input')) continue
      if (!isTurnlineError(error, 'session_busy')) throw error
      busy = error
    }
  }
  if (busy) throw busy
  for (const { key } of (await listAll(objects, folder)).objects) {
    if (!key.startsWith(sessionsRoot)) await objects.delete(key)
  }
}

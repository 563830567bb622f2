import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import { LOOP_ID } from '../../contract/loop-state.ts'
import { loopWorkFolder } from '../../contract/work-record.ts'
import { listAll } from '../../store/list-all.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import { assertSegment, workspaceSessionsPrefix } from '../../store/session-ref.ts'
import { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { LoopStore } from '../loops/loop-store.ts'
import { eraseSandbox } from '../sandbox/erase-sandbox.ts'
import { deleteSession } from './delete-session.ts'

/**
 * `DELETE /v1/workspaces/:workspace`: erases a tenant's workspace — every session of it, each
 * as `DELETE /v1/sessions/:id` does (its lease held, its log fenced, its coordinator state
 * forgotten), then every other object of the workspace folder (durable artifacts, exports
 * written into it). A session whose turn runs is left as it is and the call answers 409
 * `session_busy` once the others are gone; the next call finishes. The deleted sessions'
 * markers stay (delete-fence.ts). A workspace with nothing in it is 404. Its loops go too
 * (`deleteLoops`).
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
  await deleteLoops(deps, tenant, workspace)
  for (const { key } of (await listAll(objects, folder)).objects) {
    if (!key.startsWith(sessionsRoot)) await objects.delete(key)
  }
}

/** The loop id of a state object's name (`loop-<id>.json`), or undefined. */
function loopIdOf(name: string): string | undefined {
  const id = /^loop-(.+)\.json$/.exec(name)?.[1]
  return id !== undefined && LOOP_ID.test(id) ? id : undefined
}

/**
 * The loops of a workspace being deleted (their steps' sessions went with the others): each
 * loop's sandbox workspace on the runner (`loop-<id>`), its background work records and step
 * markers (`.turnline/work/…/<tenant>/loop.<id>/`), its schedule entry and its pointer
 * (`LoopStore.forget`). Its state (`.vtcode/state/loop-<id>.json`) goes last,
 * with the workspace's other objects, so a call cut short finds the loop again.
 */
async function deleteLoops(deps: ServiceDeps, tenant: string, workspace: string): Promise<void> {
  const { objects } = deps.sessions
  const states = `${deps.sessions.vtcodeRoot(tenant, workspace)}state/`
  const work = new WorkQueue(objects, deps.sessions.prefix)
  const loops = new LoopStore(deps.sessions)
  for (const { key } of (await listAll(objects, states)).objects) {
    const loopId = loopIdOf(key.slice(states.length))
    if (loopId === undefined) continue
    await eraseSandbox(deps, { tenant, sessionId: `loop-${loopId}` })
    await work.forgetSession(tenant, loopWorkFolder(loopId))
    await loops.forget(tenant, loopId)
  }
}

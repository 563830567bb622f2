import { TurnlineError } from '../../contract/errors.ts'
import { batchIdempotencyKeys } from '../../store/batch-idempotency-keys.ts'
import { fenceLog } from '../../store/delete-fence.ts'
import { deleteSessionFolder } from '../../store/retention.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import { WorkQueue } from '../../store/work-queue.ts'
import { CallbackOutbox } from '../callbacks/callback-outbox.ts'
import { sessionScopedKey } from '../engine/idempotency.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { coordinatorId } from '../engine/with-lease.ts'
import { eraseSandbox } from '../sandbox/erase-sandbox.ts'

/**
 * `DELETE /v1/sessions/:id`: erases everything of one session of this tenant, holding its lease
 * so no turn runs meanwhile (a session whose turn runs is refused, 409 `session_busy` with
 * Retry-After: cancel it, or wait). Under the lease, first a deleted-session marker fences the
 * log (a turn that lost its lease cannot commit after it: delete-fence.ts), then the coordinator
 * forgets the session
 * (tip, pending intents, cancellation flag, the idempotency records of the keys its batches
 * name: no process answers from a cached copy or a stored first answer after), the runner
 * erases its sandbox workspace (its commands end first), then the store erases its folder — the manifest first (no listing names it after), the log from
 * the last batch down, checkpoints, exports, stored intents, and last the id pointer. A call
 * cut short midway leaves the pointer (and what it had not reached yet, readable), so the next
 * call finds the session and finishes; once the pointer is gone every read is 404, as for an
 * unknown id.
 */
export async function deleteSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  sessionId: string,
): Promise<void> {
  // From the id pointer itself, not this process's cache: once another process deleted the
  // session its pointer is gone, and this is 404 as for an unknown id.
  locator.forget(tenant, [sessionId])
  const ref = await locator.locate(tenant, sessionId)
  const id = coordinatorId(ref)
  const begin = await deps.coordinator.beginTurn({
    sessionId: id,
    tenant,
    leaseMs: deps.defaults.leaseMs,
  })
  if (begin.status !== 'acquired') {
    const retryAfterMs = begin.status === 'busy' ? begin.retryAfterMs : 1000
    throw new TurnlineError('session_busy', `session ${sessionId} is running a turn`, {
      retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    })
  }
  try {
    const { objects } = deps.sessions
    const folder = deps.sessions.keys(ref)
    // First the fence: a turn that lost its lease can no longer commit (delete-fence.ts).
    const marker = await fenceLog(objects, folder, new Date(deps.clock.now()).toISOString())
    // Before anything is erased: a call cut short after this has nothing left to name.
    const keys = await batchIdempotencyKeys(objects, folder)
    await deps.coordinator.forgetSession(id, {
      tenant,
      keys: keys.map((key) => sessionScopedKey(ref, { key, fingerprint: '' })),
    })
    deps.sessions.forget(ref)
    // The folder's own objects stay until its sandbox is gone: a runner that fails keeps the
    // id pointer, so the next call finds the session and erases the rest.
    await eraseSandbox(deps, { tenant, sessionId })
    await objects.delete(folder.manifest)
    // Its records outside its folder: background work (pending, done, failed), callback markers.
    await new WorkQueue(objects, deps.sessions.prefix).forgetSession(tenant, sessionId)
    await new CallbackOutbox(deps.sessions).dropSession(ref)
    await deleteSessionFolder(objects, folder.root, folder.pointer, marker)
    await deps.coordinator.dropActivity({ tenant, workspace: ref.workspace }, [sessionId])
  } finally {
    await deps.coordinator.releaseLease(begin.lease).catch(() => undefined)
  }
  locator.forget(tenant, [sessionId])
}

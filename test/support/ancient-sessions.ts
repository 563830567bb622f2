import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted } from './sample-events.ts'

const DAY = 86_400_000

/**
 * Two sessions created 40 days ago in `acme/web`: `ancient-closed`, closed, which a retention
 * sweep deletes (past VT Code's 30 days), and `ancient-active`, which it keeps.
 */
export async function writeAncientSessions(store: ObjectStore): Promise<void> {
  const longAgo = Date.now() - 40 * DAY
  const sessions = new SessionStore({ store, clock: { now: () => longAgo } })
  for (const [id, close] of [
    ['ancient-closed', true],
    ['ancient-active', false],
  ] as const) {
    const ref = { tenant: 'acme', workspace: 'web', sessionId: id }
    await sessions.create(ref, id, { events: [threadStarted(id)] })
    if (close) await sessions.commit(await sessions.open(ref), { events: [threadCompleted(id, 0)] })
  }
}

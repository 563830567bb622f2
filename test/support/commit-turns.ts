import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { SessionRef } from '../../src/store/session-ref.ts'
import type { SessionStore } from '../../src/store/session-store.ts'
import { turnEvents } from './sample-events.ts'

/**
 * Commits `turns` sample turns (three items each, numbered from `from`) to a session, one
 * batch each, reopening the session before every commit; returns their events in order.
 */
export async function commitTurns(
  sessions: SessionStore,
  ref: SessionRef,
  from: number,
  turns: number,
): Promise<ThreadEvent[]> {
  const events: ThreadEvent[] = []
  for (let n = from; n < from + turns; n++) {
    const e = turnEvents(n, 3)
    await sessions.commit(await sessions.open(ref), { events: e })
    events.push(...e)
  }
  return events
}

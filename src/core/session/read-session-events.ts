import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'

/** Every event of a session, in seq order (paged through the store). */
export async function readSessionEvents(
  deps: ServiceDeps,
  ref: SessionRef,
): Promise<ParsedThreadEvent[]> {
  const events: ParsedThreadEvent[] = []
  for (let from = 0; ; ) {
    const page = await deps.sessions.readEvents(ref, from, 5000)
    events.push(...page.events.map((e) => e.line.event))
    if (page.complete || page.events.length === 0) return events
    from = page.nextSeq
  }
}

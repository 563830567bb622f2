import { serializeVersionedLine } from '../../contract/serialize.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { EventBuffer } from '../../store/event-buffer.ts'
import type { EventListener } from '../session-api.ts'

/**
 * The one dispatch gate of an invocation: every event goes to the canonical batch buffer and
 * then to the live listeners (SSE, exporters), in the same order, with the seq it will be
 * committed at. The buffer is bounded and fails closed (see EventBuffer).
 */
export class EventDispatcher {
  private readonly buffer = new EventBuffer<ThreadEvent>()
  private readonly emitted: ThreadEvent[] = []
  private nextSeq: number

  constructor(
    firstSeq: number,
    private readonly listener?: EventListener,
  ) {
    this.nextSeq = firstSeq
  }

  emit(event: ThreadEvent): void {
    this.buffer.push(event, serializeVersionedLine(event))
    this.emitted.push(event)
    const seq = this.nextSeq++
    if (this.listener) {
      try {
        this.listener(event, seq)
      } catch {
        // a broken live listener (client gone) never affects the canonical log
      }
    }
  }

  /** Events waiting for the next commit; clears the buffer. */
  take(): ThreadEvent[] {
    const events = this.buffer.pending()
    this.buffer.clear()
    return events
  }

  get pendingCount(): number {
    return this.buffer.length
  }

  /** Every event emitted by this invocation, committed or not. */
  all(): ThreadEvent[] {
    return [...this.emitted]
  }
}

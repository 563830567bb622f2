import { serializeVersionedLine } from '../contract/serialize.ts'
import type { ThreadEvent } from '../contract/thread-event.ts'
import { EventBuffer } from '../store/event-buffer.ts'
import { rememberEmittedLines } from './emitted-texts.ts'
import type { EventListener } from './session-api.ts'

/**
 * The one dispatch gate of an invocation: every event goes to the canonical batch buffer and
 * then to the live listeners (SSE, exporters), in the same order, with the seq it will be
 * committed at. The buffer is bounded and fails closed (see EventBuffer).
 */
export class EventDispatcher {
  private readonly buffer = new EventBuffer<ThreadEvent>()
  private readonly emitted: ThreadEvent[] = []
  /** The canonical line of each emitted event, as serialized at dispatch. */
  private readonly lines: string[] = []
  private nextSeq: number

  constructor(
    firstSeq: number,
    private readonly listener?: EventListener,
  ) {
    this.nextSeq = firstSeq
  }

  emit(event: ThreadEvent): void {
    const line = serializeVersionedLine(event)
    this.buffer.push(event, line)
    this.emitted.push(event)
    this.lines.push(line)
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
    return this.takeWithLines().events
  }

  /**
   * Events waiting for the next commit with their canonical lines as serialized when they were
   * dispatched (so the commit writes exactly what listeners saw, without serializing again);
   * clears the buffer.
   */
  takeWithLines(): { events: ThreadEvent[]; lines: string[] } {
    const { values, lines } = this.buffer.entries()
    this.buffer.clear()
    return { events: values, lines }
  }

  get pendingCount(): number {
    return this.buffer.length
  }

  /** Every event emitted by this invocation, committed or not. */
  all(): ThreadEvent[] {
    const events = [...this.emitted]
    rememberEmittedLines(events, this.lines)
    return events
  }
}

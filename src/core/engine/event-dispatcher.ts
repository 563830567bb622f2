import { rememberEmittedLines } from '../../contract/emitted-texts.ts'
import { serializeVersionedLine } from '../../contract/serialize.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { ThreadItem } from '../../contract/thread-item.ts'
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
  /** The canonical line of each emitted event, as serialized at dispatch. */
  private readonly lines: string[] = []
  /** Items started (or updated) and not completed yet, by id, as last seen. */
  private readonly open = new Map<string, ThreadItem>()
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
    if (event.type === 'item.started' || event.type === 'item.updated') {
      this.open.set(event.item.id, event.item)
    } else if (event.type === 'item.completed') {
      this.open.delete(event.item.id)
    }
    const seq = this.nextSeq++
    if (this.listener) {
      try {
        this.listener(event, seq, line)
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

  /**
   * Completes every item this invocation started and did not complete (a streamed tool call or
   * message cut by a cancel): as failed where the item has a status, else as it stood.
   */
  failOpenItems(): void {
    for (const item of [...this.open.values()]) {
      this.emit({
        type: 'item.completed',
        item: 'status' in item ? ({ ...item, status: 'failed' } as ThreadItem) : item,
      })
    }
  }

  /** Every event emitted by this invocation, committed or not. */
  all(): ThreadEvent[] {
    const events = [...this.emitted]
    rememberEmittedLines(events, this.lines)
    return events
  }
}

import { TurnlineError } from '../contract/errors.ts'

/** VT Code's canonical sink bounds: 8192 queued events and a 16 MiB reserved-byte budget. */
export const BUFFER_MAX_EVENTS = 8192
export const BUFFER_MAX_BYTES = 16 * 1024 * 1024
/** Fixed per-event overhead VT Code adds to each reservation (the in-memory event itself). */
const EVENT_OVERHEAD_BYTES = 128

/**
 * The bounded, fail-closed buffer of events accepted but not yet committed. Each event reserves
 * 2 × (serialized line + newline) + overhead bytes, as VT Code does. The first overflow marks
 * the buffer failed: that push and every later one throw, so the turn cannot report success,
 * and nothing already accepted is dropped silently (`pending()` still returns it).
 */
export class EventBuffer<T> {
  private readonly items: { value: T; line: string }[] = []
  private reserved = 0
  private failure: TurnlineError | undefined

  constructor(
    private readonly maxEvents = BUFFER_MAX_EVENTS,
    private readonly maxBytes = BUFFER_MAX_BYTES,
  ) {}

  /** Accepts an event with its serialized line, or throws 'buffer_overflow' (fail-closed). */
  push(value: T, line: string): void {
    if (this.failure) throw this.failure
    const cost = 2 * (new TextEncoder().encode(line).byteLength + 1) + EVENT_OVERHEAD_BYTES
    if (this.items.length >= this.maxEvents || this.reserved + cost > this.maxBytes) {
      this.failure = new TurnlineError(
        'buffer_overflow',
        `event buffer is full (${this.items.length} events, ${this.reserved} of ${this.maxBytes} ` +
          `reserved bytes; limits ${this.maxEvents} events / ${this.maxBytes} bytes): ` +
          'session event persistence failed',
        { details: { events: this.items.length, reservedBytes: this.reserved } },
      )
      throw this.failure
    }
    this.items.push({ value, line })
    this.reserved += cost
  }

  get failed(): TurnlineError | undefined {
    return this.failure
  }

  get length(): number {
    return this.items.length
  }

  pending(): T[] {
    return this.items.map((item) => item.value)
  }

  lines(): string[] {
    return this.items.map((item) => item.line)
  }

  /** The pending events with the lines they were accepted with (one pass, same order). */
  entries(): { values: T[]; lines: string[] } {
    const values: T[] = []
    const lines: string[] = []
    for (const item of this.items) {
      values.push(item.value)
      lines.push(item.line)
    }
    return { values, lines }
  }

  /** Empties the buffer after a successful commit; a failed buffer stays failed. */
  clear(): void {
    this.items.length = 0
    this.reserved = 0
  }
}

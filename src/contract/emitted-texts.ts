import { EVENT_SCHEMA_VERSION } from './serialize.ts'
import type { ParsedThreadEvent, ThreadEvent } from './thread-event.ts'

/**
 * The wire text of the events an invocation answers with, as serialized once when they were
 * dispatched — the very bytes its commits wrote — so that the HTTP layer does not serialize them
 * again. Keyed by the answer's events array (EventDispatcher.all()); an array built any other way
 * (an idempotent replay read back from the batches, a list put together by a caller) has none.
 */
const texts = new WeakMap<readonly ParsedThreadEvent[], readonly string[]>()

/** `{"schema_version":"0.11.0","event":` — what every canonical line starts with. */
const PREFIX = `{"schema_version":${JSON.stringify(EVENT_SCHEMA_VERSION)},"event":`

/** Records the canonical lines of `events` (one per event, same order). */
export function rememberEmittedLines(events: readonly ThreadEvent[], lines: readonly string[]) {
  if (events.length === lines.length) texts.set(events, lines)
}

/** The bare event texts of `events` when it is an answer's array, else undefined. */
export function emittedTexts(events: readonly ParsedThreadEvent[]): string[] | undefined {
  const lines = texts.get(events)
  if (!lines || lines.length !== events.length) return undefined
  const bare: string[] = []
  for (const line of lines) {
    const text = bareEventText(line)
    if (text === undefined) return undefined
    bare.push(text)
  }
  return bare
}

/** The bare event text of one canonical line (as a live listener receives it), else undefined. */
export function bareEventText(line: string): string | undefined {
  if (!line.startsWith(PREFIX) || !line.endsWith('}')) return undefined
  return line.slice(PREFIX.length, -1)
}

import type { StreamEvent } from './types.ts'

/** One Open Responses SSE frame: `event: <type>\ndata: <json>\n\n` (the JSON has no newlines). */
export function openResponsesFrame(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

/** The terminal frame of an Open Responses stream. */
export const OPEN_RESPONSES_DONE = 'data: [DONE]\n\n'

/** A whole stream: every event framed, then `data: [DONE]`. */
export function openResponsesStream(events: readonly StreamEvent[]): string {
  return events.map(openResponsesFrame).join('') + OPEN_RESPONSES_DONE
}

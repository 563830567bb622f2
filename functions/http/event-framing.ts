import type { TurnResponse } from '../../src/contract/api.ts'
import { bareEventText, emittedTexts } from '../../src/contract/emitted-texts.ts'
import { serializeEvent } from '../../src/contract/serialize.ts'
import {
  isUnknownEvent,
  type ParsedThreadEvent,
  type VersionedThreadEvent,
} from '../../src/contract/thread-event.ts'

/**
 * Wire framing of events. Event objects are always written by `serializeEvent` (VT Code key
 * order, optional fields omitted) and spliced into the surrounding JSON as text, so the event
 * bytes are identical in every format. Transport metadata (seq) lives only in the framing.
 */

/** The `type` a client sees: an unknown event keeps its original type string. */
export function eventType(event: ParsedThreadEvent): string {
  return isUnknownEvent(event) ? event.original_type : event.type
}

/**
 * The wire text of one event: spliced from its canonical line when the caller has the line as
 * dispatched (a live listener's third argument), else serialized here.
 */
export function eventText(event: ParsedThreadEvent, line?: string): string {
  return (line === undefined ? undefined : bareEventText(line)) ?? serializeEvent(event)
}

/** Bare ThreadEvent line (exec stream), newline-terminated. */
export function bareLine(event: ParsedThreadEvent, line?: string): string {
  return `${eventText(event, line)}\n`
}

/** NDJSON line of the events feed: `{"seq","schema_version","event"}`, newline-terminated. */
export function sequencedLine(seq: number, line: VersionedThreadEvent, text?: string): string {
  return `{"seq":${seq},"schema_version":${JSON.stringify(line.schema_version)},"event":${eventText(line.event, text)}}\n`
}

/** One Server-Sent Events frame. `data` is split on newlines so no frame can be broken. */
export function sseFrame(frame: { id?: number; event?: string; data: string }): string {
  let text = ''
  if (frame.id !== undefined) text += `id: ${frame.id}\n`
  if (frame.event !== undefined) text += `event: ${frame.event.replace(/[\r\n]/g, ' ')}\n`
  for (const line of frame.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`
  return `${text}\n`
}

/**
 * SSE frame of one event: `id:` = seq, `event:` = its type, `data:` = the bare event (spliced
 * from `line` when given, see eventText).
 */
export function eventFrame(seq: number, event: ParsedThreadEvent, line?: string): string {
  return sseFrame({ id: seq, event: eventType(event), data: eventText(event, line) })
}

/** Seq of each event of a turn response (they are the last `events.length` before next_seq). */
export function seqOf(response: TurnResponse, index: number): number {
  return response.next_seq - response.events.length + index
}

/**
 * JSON of a TurnResponse with its events spliced in as canonical text: the text serialized when
 * they were dispatched (and committed), else serialized here.
 */
export function turnResponseJson(response: TurnResponse): string {
  const texts = emittedTexts(response.events) ?? response.events.map((e) => serializeEvent(e))
  const events = texts.join(',')
  const warnings =
    response.warnings && response.warnings.length > 0
      ? `,"warnings":${JSON.stringify(response.warnings)}`
      : ''
  return (
    `{"turn_id":${JSON.stringify(response.turn_id)},"status":${JSON.stringify(response.status)},` +
    `"events":[${events}],"next_seq":${response.next_seq}${warnings}}`
  )
}

export const NDJSON_TYPE = 'application/x-ndjson; charset=utf-8'
export const SSE_TYPE = 'text/event-stream; charset=utf-8'

/** Headers of a streamed response: no caching, no proxy buffering. */
export function streamHeaders(contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  }
}

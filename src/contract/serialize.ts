import { formatF64 } from '../shared/f64-format.ts'
import {
  fractionalNumbers,
  type JsonPath,
  type NumberLexeme,
  valueSpan,
} from '../shared/json-scan.ts'
import { utf8Length } from '../shared/utf8-length.ts'
import { corruptData, describeIssues, invalidShape, parseJsonText } from './corrupt-data.ts'
import { TurnlineError } from './errors.ts'
import {
  encodeJsonString,
  encodeJsonValue,
  encodeOrderedObject,
  encodePlainMember,
  type JsonValue,
} from './json-value.ts'
import {
  isThreadEventType,
  isUnknownEvent,
  type ParsedThreadEvent,
  THREAD_EVENT_SCHEMAS,
  type ThreadEvent,
  type ThreadEventType,
  type UnknownThreadEvent,
  type VersionedThreadEvent,
} from './thread-event.ts'
import { FileUpdateChangeSchema, THREAD_ITEM_SCHEMAS, type ThreadItemType } from './thread-item.ts'
import { TokenBreakdownSchema } from './turn-events.ts'
import { UsageSchema } from './usage.ts'
import { checkWrittenEvent } from './written-event-check.ts'

/**
 * Wire text of VT Code events, byte-compatible with serde_json: compact, keys in serde declaration
 * order (`type` first; items `id`, `type`, then their fields), absent optionals omitted, floats
 * spelled as Rust writes them. Lines are returned without their terminating newline.
 */

export type { VersionedThreadEvent } from './thread-event.ts'

/** VT Code event schema version written in every versioned line. */
export const EVENT_SCHEMA_VERSION = '0.11.0'

/**
 * Longest accepted line. VT Code's canonical sink reserves twice an event's serialized size out
 * of a 16 MiB budget, so no larger event can ever be persisted by it.
 */
export const MAX_EVENT_LINE_BYTES = 8 * 1024 * 1024

type Fields = Record<string, unknown>

const keysOf = (schema: { shape: object }): readonly string[] => Object.keys(schema.shape)

const EVENT_KEYS = Object.fromEntries(
  Object.entries(THREAD_EVENT_SCHEMAS).map(([type, schema]) => [type, keysOf(schema)]),
) as Record<ThreadEventType, readonly string[]>
const ITEM_KEYS = Object.fromEntries(
  Object.entries(THREAD_ITEM_SCHEMAS).map(([type, schema]) => [type, keysOf(schema)]),
) as Record<ThreadItemType, readonly string[]>
const USAGE_KEYS = keysOf(UsageSchema)
const TOKEN_BREAKDOWN_KEYS = keysOf(TokenBreakdownSchema)
const CHANGE_KEYS = keysOf(FileUpdateChangeSchema)

function encodeItemMember(key: string, member: unknown): string {
  if (key === 'changes') {
    return `[${(member as Fields[]).map((change) => encodeOrderedObject(change, CHANGE_KEYS, encodePlainMember)).join(',')}]`
  }
  return encodePlainMember(key, member)
}

function encodeEventMember(key: string, member: unknown): string {
  switch (key) {
    case 'usage':
      return encodeOrderedObject(member as Fields, USAGE_KEYS, encodePlainMember)
    case 'token_breakdown':
      return encodeOrderedObject(member as Fields, TOKEN_BREAKDOWN_KEYS, encodePlainMember)
    case 'total_cost_usd':
      return formatF64(member as number)
    case 'item': {
      const item = member as Fields & { type: ThreadItemType }
      return encodeOrderedObject(item, ITEM_KEYS[item.type], encodeItemMember)
    }
    default:
      return encodePlainMember(key, member)
  }
}

/** Compact JSON of one bare event, as `vtcode exec --json` prints it. */
export function serializeEvent(event: ParsedThreadEvent): string {
  if (isUnknownEvent(event)) return event.source
  const checked = checkWrittenEvent(event)
  if (!checked.success) {
    throw new TurnlineError(
      'internal',
      `cannot serialize ${String(event.type)} event: ${describeIssues(checked.error)}`,
    )
  }
  const valid: ThreadEvent = checked.data
  return encodeOrderedObject(valid as Fields, EVENT_KEYS[valid.type], encodeEventMember)
}

/** Compact JSON of a versioned event, keeping its schema version. */
export function serializeVersioned(versioned: VersionedThreadEvent): string {
  const event = serializeEvent(versioned.event)
  return `{"schema_version":${encodeJsonString(versioned.schema_version)},"event":${event}}`
}

/** Canonical `events.jsonl` line (without newline) for an event we write now. */
export function serializeVersionedLine(event: ParsedThreadEvent): string {
  return serializeVersioned({ schema_version: EVENT_SCHEMA_VERSION, event })
}

// --- reading ---------------------------------------------------------------------------------

const EVENT_LINE = 'event line'

/** Numbers that may be spelled with a fraction: the cost, and anything inside tool arguments. */
function mayBeFractional(path: JsonPath): boolean {
  return (
    (path.length === 1 && path[0] === 'total_cost_usd') ||
    (path[0] === 'item' && path[1] === 'arguments')
  )
}

function valueAt(root: unknown, path: JsonPath): unknown {
  let node = root
  for (const step of path) {
    if (typeof node !== 'object' || node === null) return undefined
    node = (node as Record<string | number, unknown>)[step]
  }
  return node
}

/**
 * Decodes one event object. `source` yields the exact JSON text of the object (kept for unknown
 * event types); `fractional` lists numbers spelled with a fraction or exponent, relative to it.
 */
export function parseEventValue(
  value: unknown,
  source: () => string = () => encodeJsonValue(value as JsonValue),
  fractional: readonly NumberLexeme[] = [],
  what = 'event',
): ParsedThreadEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corruptData(what, 'event is not a JSON object', { reason: 'invalid_shape' })
  }
  const type = (value as Fields).type
  if (typeof type !== 'string') {
    throw corruptData(what, 'event has no string "type"', { reason: 'invalid_shape' })
  }
  if (!isThreadEventType(type)) {
    const unknown: UnknownThreadEvent = { type: 'unknown', original_type: type, source: source() }
    return unknown
  }
  const checked = THREAD_EVENT_SCHEMAS[type].safeParse(value)
  if (!checked.success) throw invalidShape(what, checked.error)
  for (const { path, lexeme } of fractional) {
    if (!mayBeFractional(path) && typeof valueAt(checked.data, path) === 'number') {
      throw corruptData(what, `${path.join('.')}: expected an integer, got ${lexeme}`, {
        reason: 'invalid_shape',
      })
    }
  }
  return checked.data as ThreadEvent
}

/** Decodes a `{schema_version, event}` object (e.g. one entry of a stored batch). */
export function parseVersionedValue(
  value: unknown,
  eventSource?: () => string,
  fractional: readonly NumberLexeme[] = [],
  what = 'versioned event',
): VersionedThreadEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corruptData(what, 'not a JSON object', { reason: 'invalid_shape' })
  }
  const { schema_version, event } = value as Fields
  if (typeof schema_version !== 'string') {
    throw corruptData(what, 'missing string "schema_version"', { reason: 'invalid_shape' })
  }
  if (event === undefined) throw corruptData(what, 'missing "event"', { reason: 'invalid_shape' })
  const inner = fractional
    .filter(({ path }) => path[0] === 'event')
    .map(({ path, lexeme }) => ({ path: path.slice(1), lexeme }))
  return { schema_version, event: parseEventValue(event, eventSource, inner, what) }
}

function lineText(line: string): string {
  let text = line.endsWith('\n') ? line.slice(0, -1) : line
  if (text.endsWith('\r')) text = text.slice(0, -1)
  if (text.trim() === '') throw corruptData(EVENT_LINE, 'empty line', { reason: 'empty' })
  if (text.length * 3 > MAX_EVENT_LINE_BYTES) {
    const bytes = utf8Length(text)
    if (bytes > MAX_EVENT_LINE_BYTES) {
      throw corruptData(EVENT_LINE, `line too long (${bytes} bytes > ${MAX_EVENT_LINE_BYTES})`, {
        reason: 'too_long',
        bytes,
      })
    }
  }
  if (text.includes('\n')) {
    throw corruptData(EVENT_LINE, 'more than one line', { reason: 'invalid_json' })
  }
  return text
}

/** Parses one bare event line (`exec --json`). Throws TurnlineError('corrupt_data'). */
export function parseEventLine(line: string): ParsedThreadEvent {
  const text = lineText(line)
  const value = parseJsonText(text, EVENT_LINE)
  return parseEventValue(value, () => text.trim(), fractionalNumbers(text), EVENT_LINE)
}

/** Parses one canonical `events.jsonl` line. Throws TurnlineError('corrupt_data'). */
export function parseVersionedLine(line: string): VersionedThreadEvent {
  const text = lineText(line)
  const value = parseJsonText(text, EVENT_LINE)
  const eventSource = () => {
    const span = valueSpan(text, ['event'])
    return span === undefined ? '' : text.slice(span.start, span.end)
  }
  return parseVersionedValue(value, eventSource, fractionalNumbers(text), EVENT_LINE)
}

import * as z from 'zod'
import { compiledSchema } from './compiled-schema.ts'
import type { JsonValue } from './json-value.ts'
import { isCheckedJsonValue } from './json-value-check.ts'
import { lazySchema } from './lazy-schema.ts'
import {
  isThreadEventType,
  THREAD_EVENT_SCHEMAS,
  type ThreadEvent,
  ThreadEventSchema,
} from './thread-event.ts'
import { THREAD_ITEM_SCHEMAS, type ThreadItemType } from './thread-item.ts'

/**
 * The check of an event before it is written (`serializeEvent`, at dispatch): `ThreadEventSchema`'s
 * answer, through a compiled parser where the entry installed zod's compiler (compiled-schema.ts).
 *
 * `ThreadEventSchema` itself does not compile: an item's `arguments` is a JSON value, whose schema
 * refers to itself (a reference cycle, which only zod's runtime parser closes). So the compiled
 * parsers are made from `writtenEventSchema`s: the member of the union that the event's `type`
 * (and its item's `type`) selects, as the union's own parse selects it, with each `arguments`
 * checked by `isCheckedJsonValue` (a walk with a stack of its own) instead. What such a parser
 * accepts the runtime parser accepts, with data of the same JSON text; whatever it does not
 * accept (a malformed event, an unknown type, or a value the walk leaves undecided) is parsed by
 * `ThreadEventSchema`'s runtime parser, whose answer (data, or its issues and message) is the one
 * returned. So an event is accepted or rejected exactly as before, with the same issues.
 *
 * One parser per kind of event, each compiled at its own `USES_BEFORE_COMPILING`-th check: the
 * whole union's would cost ≈ 50 ms of CPU to compile, a kind's a few, and only the kinds a process
 * writes often are compiled, none in its first turn.
 */
export function checkWrittenEvent(event: unknown): z.ZodSafeParseResult<ThreadEvent> {
  const schema = writtenEventSchema(event)
  if (schema !== undefined) {
    const fast = compiledSchema(schema)
    if (fast !== schema) {
      const checked = fast.safeParse(event)
      if (checked.success) return checked as z.ZodSafeParseResult<ThreadEvent>
    }
  }
  return ThreadEventSchema.safeParse(event)
}

/**
 * The member of `ThreadEventSchema` that `event`'s `type` selects (for an item event, with the
 * member of the item union its item's `type` selects), its `arguments` checked by
 * `isCheckedJsonValue`; undefined for a value whose types select none.
 */
export function writtenEventSchema(event: unknown): z.ZodType | undefined {
  if (typeof event !== 'object' || event === null) return undefined
  const type = (event as { type?: unknown }).type
  if (typeof type !== 'string' || !isThreadEventType(type)) return undefined
  const schema = THREAD_EVENT_SCHEMAS[type]
  if (!('item' in schema.shape)) return schema
  const item = (event as { item?: unknown }).item
  const itemType =
    typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : undefined
  if (typeof itemType !== 'string' || !Object.hasOwn(THREAD_ITEM_SCHEMAS, itemType))
    return undefined
  let byItem = itemEvents.get(type)
  if (byItem === undefined) {
    byItem = new Map()
    itemEvents.set(type, byItem)
  }
  let written = byItem.get(itemType)
  if (written === undefined) {
    written = (schema as z.ZodObject).extend({ item: writtenItem(itemType as ThreadItemType) })
    byItem.set(itemType, written)
  }
  return written
}

/** Item events by event type, then item type: at most 3 × 11. */
const itemEvents = new Map<string, Map<string, z.ZodType>>()

function writtenItem(type: ThreadItemType): z.ZodObject {
  const schema: z.ZodObject = THREAD_ITEM_SCHEMAS[type]
  return 'arguments' in schema.shape
    ? schema.extend({ arguments: CheckedJsonValueSchema.optional() })
    : schema
}

/** A JSON value, by a check with no reference cycle (not for JSON Schema: no shape given). */
const CheckedJsonValueSchema = lazySchema(() => z.custom<JsonValue>(isCheckedJsonValue))

import * as z from 'zod'
import { compiledSchema } from './compiled-schema.ts'
import type { JsonValue } from './json-value.ts'
import { isCheckedJsonValue } from './json-value-check.ts'
import { lazySchema } from './lazy-schema.ts'
import { THREAD_EVENT_SCHEMAS, type ThreadEvent, ThreadEventSchema } from './thread-event.ts'
import { THREAD_ITEM_SCHEMAS } from './thread-item.ts'

/**
 * The check of an event before it is written (`serializeEvent`, at dispatch): `ThreadEventSchema`'s
 * answer, through a compiled parser where the entry installed zod's compiler (compiled-schema.ts).
 *
 * `ThreadEventSchema` itself does not compile: an item's `arguments` is a JSON value, whose schema
 * refers to itself (a reference cycle, which only zod's runtime parser closes). So the compiled
 * parser is made from `WrittenEventSchema`, the same events with each `arguments` checked by
 * `isCheckedJsonValue` (a walk with a stack of its own) instead. What it accepts the runtime
 * parser accepts, with data of the same JSON text; whatever it does not accept (a malformed event,
 * or a value the walk leaves undecided) is parsed by `ThreadEventSchema`'s runtime parser, whose
 * answer (data, or its issues and message) is the one returned. So an event is accepted or
 * rejected exactly as before, with the same issues.
 */
export function checkWrittenEvent(event: unknown): z.ZodSafeParseResult<ThreadEvent> {
  const fast = compiledSchema(WrittenEventSchema, EVENTS_BEFORE_COMPILING)
  if (fast !== WrittenEventSchema) {
    const checked = fast.safeParse(event)
    if (checked.success) return checked as z.ZodSafeParseResult<ThreadEvent>
  }
  return ThreadEventSchema.safeParse(event)
}

/**
 * A turn dispatches 10–15 events: compiled after about as many turns as the schemas of what a
 * commit writes (USES_BEFORE_COMPILING commits), so a process's first turn does not pay it.
 */
export const EVENTS_BEFORE_COMPILING = 100

/** A JSON value, by a check with no reference cycle (not for JSON Schema: no shape given). */
const CheckedJsonValueSchema = lazySchema(() => z.custom<JsonValue>(isCheckedJsonValue))

/** `ThreadEventSchema` with every item's `arguments` checked by `isCheckedJsonValue`. */
export const WrittenEventSchema = lazySchema(() => {
  const item = tagged(
    Object.values(THREAD_ITEM_SCHEMAS).map(
      (schema): z.ZodObject =>
        'arguments' in schema.shape
          ? schema.extend({ arguments: CheckedJsonValueSchema.optional() })
          : schema,
    ),
  )
  return tagged(
    Object.values(THREAD_EVENT_SCHEMAS).map(
      (schema): z.ZodObject => ('item' in schema.shape ? schema.extend({ item }) : schema),
    ),
  )
})

function tagged(schemas: z.ZodObject[]) {
  const [first, ...rest] = schemas
  if (first === undefined) throw new Error('a tagged union needs a member')
  return z.discriminatedUnion('type', [first, ...rest])
}

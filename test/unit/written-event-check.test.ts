import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { parseBatch } from '../../src/contract/batch.ts'
import {
  compiledSchema,
  USES_BEFORE_COMPILING,
  useSchemaCompiler,
} from '../../src/contract/compiled-schema.ts'
import { describeIssues } from '../../src/contract/corrupt-data.ts'
import { encodeJsonValue, type JsonValue } from '../../src/contract/json-value.ts'
import {
  CHECKED_JSON_CONTAINERS,
  CHECKED_JSON_DEPTH,
  isCheckedJsonValue,
} from '../../src/contract/json-value-check.ts'
import { parseEventLine, serializeEvent } from '../../src/contract/serialize.ts'
import { ThreadEventSchema } from '../../src/contract/thread-event.ts'
import { checkWrittenEvent, writtenEventSchema } from '../../src/contract/written-event-check.ts'

const SESSION = join(
  import.meta.dirname,
  '../fixtures/store/v3-session/t1/default/.vtcode/sessions/session-20261205T095510Z-7139323fb01216ea',
)

/** Every event of the fixtures: the VT Code lines and a stored session's batches. */
const FIXTURE_EVENTS = [
  ...readFileSync(join(import.meta.dirname, '../fixtures/vtcode/events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map(parseEventLine),
  ...readdirSync(join(SESSION, 'log')).flatMap((name) =>
    parseBatch(readFileSync(join(SESSION, 'log', name))).events.map((entry) => entry.event),
  ),
].filter((event) => event.type !== 'unknown')

/**
 * An outcome of a check, comparable across checks: the data's JSON text (or the error the text
 * cannot be written with), or the issues' text; a check that throws, its error's name.
 */
function outcome(check: () => z.ZodSafeParseResult<unknown>) {
  let checked: z.ZodSafeParseResult<unknown>
  try {
    checked = check()
  } catch (error) {
    return { threw: (error as Error).name }
  }
  if (!checked.success) return { issues: describeIssues(checked.error) }
  try {
    return { text: encodeJsonValue(checked.data as JsonValue) }
  } catch (error) {
    return { data: 'unwritable', error: (error as Error).name }
  }
}

function expectSameAnswer(event: unknown) {
  const runtime = outcome(() => ThreadEventSchema.safeParse(event))
  expect(outcome(() => checkWrittenEvent(event))).toEqual(runtime)
  return runtime
}

function withArguments(args: unknown) {
  return {
    type: 'item.completed',
    item: {
      id: 'item_0',
      type: 'tool_invocation',
      tool_name: 'lookup',
      arguments: args,
      tool_call_id: 'call_0',
      status: 'completed',
      outcome: 'success',
    },
  }
}

function nested(depth: number): unknown {
  let value: unknown = 1
  for (let level = 0; level < depth; level++) value = level % 2 ? [value] : { a: value }
  return value
}

const cyclic: Record<string, unknown> = { a: 1 }
cyclic.self = cyclic
const shared = { x: [1, 2] }
class Point {
  x = 1
}
const withSymbol = { a: 1, [Symbol('s')]: 2 }
const hidden = Object.defineProperty({ a: 1 }, 'b', { value: 2, enumerable: false })

/** Arguments the runtime rejects, takes with changes, or may not decide without overflowing. */
const AWKWARD_ARGUMENTS: [string, unknown][] = [
  ['NaN', Number.NaN],
  ['Infinity', [1, Number.POSITIVE_INFINITY]],
  ['undefined in a list', [1, undefined]],
  ['a hole in a list', new Array(3).fill(1, 0, 1)],
  ['a function', { f: () => 1 }],
  ['a bigint', { n: 1n }],
  ['a symbol', Symbol('s')],
  ['a Date', { when: new Date(0) }],
  ['a Map', new Map([['a', 1]])],
  ['a class instance', { p: new Point() }],
  ['a boxed string', new String('x')],
  ['an own __proto__ key', JSON.parse('{"__proto__":{"a":1},"b":2}')],
  ['a symbol key', withSymbol],
  ['a key that is not enumerable', hidden],
  ['a null-prototype object', Object.assign(Object.create(null), { a: 1 })],
  ['a "constructor" member', JSON.parse('{"constructor":{"a":1}}')],
  ['a reference cycle', cyclic],
  ['a member shared twice', { a: shared, b: shared }],
  ['nesting at the walked depth', nested(CHECKED_JSON_DEPTH - 1)],
  ['nesting past the walked depth', nested(CHECKED_JSON_DEPTH + 5)],
  ['nesting that overflows the runtime parser', nested(100_000)],
  ['more lists than walked', Array.from({ length: CHECKED_JSON_CONTAINERS + 1 }, () => [])],
  ['a JSON null', null],
  ['numbers, strings, unicode', { n: [0, -0, 1.5e300, -7], s: 'é\u2028\ud800', t: true }],
]

describe('the check of an event before it is written', () => {
  it('compiles each kind of event at its USES_BEFORE_COMPILING-th check (a zod that stops compiling them, or an event that gains a JSON value elsewhere, fails here)', () => {
    useSchemaCompiler(z.compile)
    const mcp = { type: 'item.started', item: { id: 'i', type: 'mcp_tool_call', tool_name: 't' } }
    const events = [...FIXTURE_EVENTS, withArguments({ a: 1 }), mcp]
    const kinds = new Set(events.map(writtenEventSchema))
    expect(kinds.size).toBeGreaterThan(12)
    for (const schema of kinds) {
      if (schema === undefined) throw new Error('an event of no kind')
      for (let use = 1; use < USES_BEFORE_COMPILING; use++) {
        expect(compiledSchema(schema)).toBe(schema)
      }
      expect(compiledSchema(schema)).not.toBe(schema)
    }
    // One schema per kind, made once.
    expect(writtenEventSchema(withArguments([1]))).toBe(writtenEventSchema(withArguments('x')))
    for (const none of [
      null,
      {},
      { type: 'no.such' },
      { type: 'item.started', item: { type: 'no' } },
    ]) {
      expect(writtenEventSchema(none)).toBeUndefined()
    }
  })

  it('answers what ThreadEventSchema answers for every fixture event, compiled and not', () => {
    expect(FIXTURE_EVENTS.length).toBeGreaterThan(40)
    for (const event of FIXTURE_EVENTS) {
      const runtime = expectSameAnswer(event)
      expect(runtime).toHaveProperty('text')
    }
  })

  it('rejects what ThreadEventSchema rejects, with its issues', () => {
    const started = { type: 'item.started', item: { id: 'i', type: 'agent_message', text: 't' } }
    const invalid: unknown[] = [
      null,
      'event',
      { type: 'no.such.event' },
      { ...started, item: { ...started.item, type: 'no_such_item' } },
      { ...started, item: { ...started.item, text: 1 } },
      { type: 'turn.completed', usage: { input_tokens: 1 } },
      {
        type: 'turn.completed',
        usage: {
          input_tokens: -1,
          cached_input_tokens: 0,
          cache_creation_tokens: 0,
          output_tokens: 0,
        },
      },
      { ...withArguments({ a: 1 }), item: { ...withArguments({ a: 1 }).item, tool_call_id: null } },
      { ...withArguments({ a: 1 }), item: { ...withArguments({ a: 1 }).item, status: 'nowhere' } },
    ]
    for (const event of invalid) expect(expectSameAnswer(event)).toHaveProperty('issues')
  })

  it.each(AWKWARD_ARGUMENTS)('gives the same answer for arguments with %s', (_, args) => {
    expectSameAnswer(withArguments(args))
    expectSameAnswer({
      type: 'item.started',
      item: { ...withArguments(args).item, type: 'mcp_tool_call', status: 'in_progress' },
    })
  })

  it('serializes an event exactly as the runtime check would let it be written', () => {
    for (const event of FIXTURE_EVENTS) {
      expect(serializeEvent(event)).toBe(serializeEvent(ThreadEventSchema.parse(event)))
    }
    const message = (() => {
      try {
        serializeEvent(withArguments(Number.NaN) as never)
      } catch (error) {
        return (error as Error).message
      }
    })()
    const issues = ThreadEventSchema.safeParse(withArguments(Number.NaN))
    expect(issues.success).toBe(false)
    expect(message).toBe(
      `cannot serialize item.completed event: ${describeIssues((issues as { error: z.ZodError }).error)}`,
    )
  })
})

describe('isCheckedJsonValue', () => {
  it('takes plain JSON, nested up to its depth', () => {
    expect(isCheckedJsonValue({ a: [1, 'x', null, true, { b: [] }] })).toBe(true)
    expect(isCheckedJsonValue(nested(CHECKED_JSON_DEPTH - 1))).toBe(true)
  })

  it('leaves to the runtime what it does not decide', () => {
    // The first 14: not JSON, or taken by the runtime parser with changes.
    for (const [, value] of AWKWARD_ARGUMENTS.slice(0, 14)) {
      expect(isCheckedJsonValue(value)).toBe(false)
    }
    expect(isCheckedJsonValue(cyclic)).toBe(false)
    expect(isCheckedJsonValue(nested(CHECKED_JSON_DEPTH + 1))).toBe(false)
    expect(isCheckedJsonValue(nested(100_000))).toBe(false)
  })
})

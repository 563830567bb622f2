import * as z from 'zod'
import { compiledSchema } from './compiled-schema.ts'
import { corruptData, describeIssues, invalidShape, parseStoredObject } from './corrupt-data.ts'
import { TurnlineError } from './errors.ts'
import { encodeOrderedObject } from './json-value.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Shared rules of the JSON documents Turnline stores (manifest, turn index, batches,
 * checkpoints): each names its format and version; an unknown version is `unsupported_version`,
 * anything unreadable is `corrupt_data`; writes are validated and compact, keys in schema order.
 */

/** RFC 3339 timestamp with `Z` or a numeric offset (any fraction precision, as chrono writes). */
export const Rfc3339Schema = lazySchema(() => z.iso.datetime({ offset: true }))

/** A count, sequence number or batch number. */
export const CounterSchema = lazySchema(() => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER))

/** Reads `input` as a JSON object, or throws corrupt_data. */
export function readDocument(input: Uint8Array | string, what: string): Record<string, unknown> {
  return parseStoredObject(input, what)
}

/** Requires `doc[field] === expected` (a format tag), else corrupt_data. */
export function requireFormat(
  doc: Record<string, unknown>,
  field: string,
  expected: string,
  what: string,
): void {
  const found = doc[field]
  if (found !== expected) {
    throw corruptData(
      what,
      `"${field}" is ${JSON.stringify(found) ?? 'missing'}, expected "${expected}"`,
      { reason: 'wrong_format' },
    )
  }
}

/**
 * Requires integer `doc[field]` to be a supported version: another integer is
 * unsupported_version, a missing or non-integer value is corrupt_data (unless `optional`, where
 * a missing field stands for the first version).
 */
export function requireVersion(
  doc: Record<string, unknown>,
  field: string,
  supported: readonly number[],
  what: string,
  options: { optional?: boolean } = {},
): void {
  const found = doc[field]
  if (found === undefined && options.optional) return
  if (typeof found !== 'number' || !Number.isInteger(found)) {
    throw corruptData(what, `"${field}" must be an integer version, got ${JSON.stringify(found)}`, {
      reason: 'invalid_shape',
    })
  }
  if (!supported.includes(found)) {
    throw new TurnlineError(
      'unsupported_version',
      `${what}: ${field} ${found} is not supported (supported: ${supported.join(', ')})`,
      { details: { what, field, version: found, supported: [...supported] } },
    )
  }
}

/** Validates a stored document with `schema`, or throws corrupt_data naming every issue. */
export function validateDocument<T extends z.ZodType>(
  schema: T,
  doc: unknown,
  what: string,
): z.output<T> {
  const checked = schema.safeParse(doc)
  if (!checked.success) throw invalidShape(what, checked.error)
  return checked.data
}

/**
 * Validates a document before it is written; an invalid one is a fault of the writer. Through the
 * schema's compiled parser (compiled-schema.ts): the same result, issues and message.
 */
export function validateForWrite<T extends z.ZodType>(
  schema: T,
  value: unknown,
  what: string,
): z.output<T> {
  const checked = compiledSchema(schema).safeParse(value)
  if (!checked.success) {
    throw new TurnlineError('internal', `cannot write ${what}: ${describeIssues(checked.error)}`)
  }
  return checked.data
}

/** Member names of an object schema, in declaration (= written) order. */
export function keysOf(schema: { shape: object }): readonly string[] {
  return Object.keys(schema.shape)
}

/**
 * Reader and writer of a stored document tagged `format` and `version` (the common case): parse
 * checks the tag, then the version, then the shape; serialize validates and writes compact JSON
 * with the schema's key order.
 */
export function documentCodec<T extends z.ZodObject>(
  schema: T,
  tag: { format: string; version: number; what: string },
): { parse(input: Uint8Array | string): z.output<T>; serialize(value: z.output<T>): string } {
  // Read from the schema at the first write, so that a codec costs nothing until it is used.
  let keys: readonly string[] | undefined
  return {
    parse(input) {
      const doc = readDocument(input, tag.what)
      requireFormat(doc, 'format', tag.format, tag.what)
      requireVersion(doc, 'version', [tag.version], tag.what)
      return validateDocument(schema, doc, tag.what)
    },
    serialize(value) {
      keys ??= keysOf(schema)
      return encodeOrderedObject(validateForWrite(schema, value, tag.what), keys)
    },
  }
}

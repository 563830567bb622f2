import type * as z from 'zod'

/**
 * A schema's check through zod's compiled parser (`z.compile`) where the entry installed it
 * (`useSchemaCompiler`; the Node entries do): one generated function walks the value instead of
 * the parse closures of every schema in the tree. The result is zod's own: a value the generated
 * function does not accept is parsed again by the runtime parser, whose issues are the ones
 * returned, and a schema zod does not compile (one with a reference cycle, such as a JSON
 * value's) is used as it is.
 *
 * Why: the documents a commit writes are checked once each, between the turn's other work, where
 * each check starts with cold caches. The runtime parser touches every schema object of the tree;
 * on a steady `npm start` turn a batch's check cost ≈ 100–260 µs and a turn-index entry's
 * ≈ 100 µs, against ≈ 2 µs when the same check runs hot (docs/performance.md).
 *
 * A schema is compiled at its `USES_BEFORE_COMPILING`-th check, not its first: compiling costs
 * 5–20 ms of CPU a schema, which a process's first turn (its cold start) does not pay. The Worker
 * and Deno do not install the compiler, so their bundles do not carry it; there every schema is
 * used as it is.
 */
export function compiledSchema<T extends z.ZodType>(schema: T): T {
  if (compiler === undefined) return schema
  const known = seen.get(schema)
  if (typeof known === 'object') return known as T
  const uses = (known ?? 0) + 1
  if (uses < USES_BEFORE_COMPILING) {
    seen.set(schema, uses)
    return schema
  }
  const fast = compiler(schema)
  seen.set(schema, fast)
  return fast
}

/** Installs zod's `compile` (or another with its contract) for `compiledSchema`. */
export function useSchemaCompiler(compile: SchemaCompiler): void {
  compiler = compile
}

/** Returns a schema whose parse gives the same results as `schema`'s, or `schema` itself. */
export type SchemaCompiler = <T extends z.ZodType>(schema: T) => T

export const USES_BEFORE_COMPILING = 8

let compiler: SchemaCompiler | undefined

/** Per schema: its compiled form once made, else how many checks it has had. */
const seen = new WeakMap<z.ZodType, z.ZodType | number>()

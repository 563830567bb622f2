import * as z from 'zod'

/**
 * A zod schema built when it is first used instead of when its module loads.
 *
 * zod builds every schema it is given at once: thousands of objects for the contract, of which a
 * start and its first turn use a few hundred (docs/performance.md, cold start). `lazySchema(() =>
 * z.object(…))` returns an object of the same type that becomes that schema at its first use — a
 * parse, a method, a property read, being composed into a schema that is parsed or converted to
 * JSON Schema. Until then it is an empty object whose prototype builds the schema on any read;
 * the build then makes the object itself a zod instance of the built schema's kind with its
 * definition, parent and registered metadata (as zod's own `clone` does, and with the id kept),
 * so from then on it is a plain zod schema: the same parse, issues and errors, the same JSON
 * Schema and OpenAPI document, no indirection on later uses. Building once costs what building
 * at load did, plus one instance.
 *
 * The build must not use the schema it builds (a recursive schema refers to itself through a
 * getter in its shape, as zod documents, which zod reads after the build).
 */
export function lazySchema<T extends z.core.$ZodType>(build: () => T): T {
  const stand = Object.create(unbuilt) as T
  let building = false
  builds.set(stand, () => {
    if (building) throw new Error('a lazy schema was used while it was being built')
    building = true
    try {
      const schema = build()
      const internals = schema._zod
      Object.setPrototypeOf(stand, Object.getPrototypeOf(schema))
      builds.delete(stand)
      // zod's constructor run on this object: every trait's initializer, with this object as the
      // instance that its parsers and JSON Schema processors refer to.
      ;(internals.constr as unknown as (this: T, def: unknown) => T).call(stand, internals.def)
      if (internals.parent !== undefined) stand._zod.parent = internals.parent
      const meta = z.globalRegistry._map.get(schema)
      if (meta !== undefined) z.globalRegistry.add(stand, meta)
    } finally {
      building = false
    }
  })
  return stand
}

/** How to build each schema not built yet, by its object. */
const builds = new WeakMap<object, () => void>()

function become(stand: object): object {
  const build = builds.get(stand)
  if (build === undefined) throw new Error('not a lazy schema waiting to be built')
  build()
  return stand
}

/** A schema with nothing but what every zod schema has. */
let plain: z.ZodUnknown | undefined

/**
 * The prototype of every schema not built yet (one for all, so that built schemas of a kind
 * share their hidden class and zod's property reads stay fast): a read or write that reaches it
 * builds the schema, whose prototype then replaces it, and runs on the built object. `in` and a
 * prototype walk do not say which object asked: before the build, `in` answers for what every
 * zod schema has (zod asks `"_idmap" in schema` to tell a registry from a schema), and the walk
 * ends at Object.prototype.
 */
const unbuilt = new Proxy(Object.create(null) as object, {
  get: (_, key, receiver) => Reflect.get(become(receiver), key, receiver),
  set: (_, key, value, receiver) => Reflect.set(become(receiver), key, value, receiver),
  has: (_, key) => {
    plain ??= z.unknown()
    return Reflect.has(plain, key)
  },
  getPrototypeOf: () => Object.prototype,
})

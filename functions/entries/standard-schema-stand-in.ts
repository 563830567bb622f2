/**
 * Stand-in for `@standard-community/standard-json` and `@standard-community/standard-openapi`
 * in every bundle (infra/build/worker-bundle.mjs for the Worker; infra/build/build.mjs for the
 * Node, Deno and Lambda builds). hono-openapi imports them for its own `resolver()`, whose
 * converters are loaded by dynamic imports of every schema library they support (zod 3 and 4 in
 * full, valibot, arktype …), all of which a bundler must include: for zod 4 a dynamic import of
 * `zod/v4/core`, which keeps its whole namespace (≈ 40 locales, the AOT compiler) in the zod
 * chunk every start loads. Turnline hands hono-openapi its own resolver
 * (functions/openapi/schema-resolver.ts, zod's `toJSONSchema`), so these are never called; this
 * keeps ≈ 400 KB out of each bundle.
 */
function unavailable(): never {
  throw new Error(
    'standard-json/standard-openapi are not bundled: use functions/openapi/schema-resolver.ts',
  )
}

export const toJsonSchema = unavailable
export const toOpenAPISchema = unavailable
export const loadVendor = unavailable

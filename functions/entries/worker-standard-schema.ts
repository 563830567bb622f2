/**
 * Stand-in for `@standard-community/standard-json` and `@standard-community/standard-openapi`
 * in the Worker and Lambda bundles (wrangler.toml [alias], infra/build/build.mjs). hono-openapi
 * imports them for its own `resolver()`, whose converters are loaded by dynamic imports of every
 * schema library they support (zod 3 and 4 in full, valibot, arktype …), all of which a bundler
 * must include. Turnline hands hono-openapi its own resolver (functions/openapi/schema-resolver.ts,
 * zod's `toJSONSchema`), so these are never called; this keeps ~400 KB out of the bundle.
 */
function unavailable(): never {
  throw new Error(
    'standard-json/standard-openapi are not bundled: use functions/openapi/schema-resolver.ts',
  )
}

export const toJsonSchema = unavailable
export const toOpenAPISchema = unavailable
export const loadVendor = unavailable

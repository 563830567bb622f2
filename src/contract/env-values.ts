import * as z from 'zod'

/**
 * Parsers of environment-variable values, shared by every environment schema (functions/
 * env-config.ts, functions/tenancy/tenancy-env.ts, the runner's sandbox settings). Values are
 * strings; the callers treat an empty value as unset before these run.
 */

/**
 * A whole number from `min` to `max`. Its parser (ten zod schemas) is built when a value is first
 * parsed: behind `.default()` or `.optional()`, an unset variable never reaches it, and a start
 * reads a few of the forty-odd integer variables (docs/performance.md, cold start).
 */
export const envInteger = (min: number, max: number) =>
  z.lazy(() =>
    z
      .string()
      .trim()
      .regex(/^\d+$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.number().int().min(min).max(max)),
  )

/** A boolean: `1`/`true`/`yes` or `0`/`false`/`no`, in any case. */
export const envFlag = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['1', '0', 'true', 'false', 'yes', 'no']))
  .transform((v) => v === '1' || v === 'true' || v === 'yes')

/** A comma-separated list: each entry trimmed, empty ones dropped (pipe it into its array's schema). */
export const envList = z.string().transform((value) =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean),
)

/** JSON text, parsed (pipe it into the schema of its value); `message` when it is not JSON. */
export const envJson = (message: string) =>
  z.string().transform((value, ctx) => {
    try {
      return JSON.parse(value) as unknown
    } catch {
      ctx.addIssue({ code: 'custom', message })
      return z.NEVER
    }
  })

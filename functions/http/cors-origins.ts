import * as z from 'zod'

/**
 * TURNLINE_CORS_ORIGINS: comma-separated origins as a browser sends them in `Origin`
 * (`https://app.example.com`, `http://localhost:5173`), or `*` for every origin (with keys
 * only: env-config refuses it without). Each is normalized the way browsers serialize it:
 * lowercase, default port dropped.
 */
export const CorsOriginsSchema = z.string().transform((value, ctx) =>
  value
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean)
    .map((entry) => {
      const origin = originOf(entry)
      if (origin === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `${entry}: not an origin; write scheme://host[:port] (no path), or *`,
        })
      }
      return origin ?? entry
    }),
)

function originOf(entry: string): string | undefined {
  if (entry === '*') return entry
  // scheme://authority and nothing after it (no path, query, fragment or user).
  if (!/^https?:\/\/[^/?#@]+$/.test(entry)) return undefined
  try {
    return new URL(entry).origin
  } catch {
    return undefined
  }
}

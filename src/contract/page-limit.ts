import * as z from 'zod'

/** The `limit` query parameter of a paged listing: 1 to `max` items, `fallback` when absent. */
export function pageLimit(max: number, fallback: number, what: string) {
  return z.coerce.number().int().min(1).max(max).default(fallback).describe(what)
}

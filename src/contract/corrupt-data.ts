import type * as z from 'zod'
import { parseJson } from '../shared/json-syntax.ts'
import { TurnlineError } from './errors.ts'

/**
 * Helpers shared by the readers of wire lines and stored objects: every failure becomes a
 * TurnlineError('corrupt_data') whose message names what was being read and why it failed.
 */

export function corruptData(
  what: string,
  reason: string,
  details: Record<string, unknown> = {},
): TurnlineError {
  return new TurnlineError('corrupt_data', `${what}: ${reason}`, { details: { what, ...details } })
}

/** One line per issue: `path: message` (path `<root>` for the value itself). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length === 0 ? '<root>' : issue.path.map(String).join('.')
      return `${path}: ${issue.message}`
    })
    .join('; ')
}

export function invalidShape(what: string, error: z.ZodError): TurnlineError {
  return corruptData(what, `invalid shape (${describeIssues(error)})`, {
    reason: 'invalid_shape',
    issues: error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
  })
}

export function parseJsonText(text: string, what: string): unknown {
  const parsed = parseJson(text)
  if (parsed.ok) return parsed.value
  throw corruptData(what, `invalid JSON (${parsed.reason})`, { reason: 'invalid_json' })
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** Text of a stored object; invalid UTF-8 is corrupt data. */
export function decodeStoredText(input: Uint8Array | string, what: string): string {
  if (typeof input === 'string') return input
  try {
    return UTF8.decode(input)
  } catch {
    throw corruptData(what, 'not valid UTF-8', { reason: 'invalid_utf8' })
  }
}

/** JSON object of a stored document; anything else (array, string, …) is corrupt data. */
export function parseStoredObject(
  input: Uint8Array | string,
  what: string,
): Record<string, unknown> {
  const text = decodeStoredText(input, what)
  if (text.trim() === '') throw corruptData(what, 'empty', { reason: 'empty' })
  const value = parseJsonText(text, what)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corruptData(what, 'not a JSON object', { reason: 'invalid_shape' })
  }
  return value as Record<string, unknown>
}

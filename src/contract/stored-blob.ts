import type * as z from 'zod'
import { TurnlineError } from './errors.ts'

/**
 * Reads a content-addressed object of a session's folder (an image, stored-image.ts; a document,
 * stored-file.ts) named by its SHA-256: corrupt_data when it is not one of `schema` under that
 * name, unsupported_version when it is newer than `version`.
 */
export function parseStoredBlob<T extends { sha256: string }>(
  text: string,
  sha256: string,
  what: string,
  version: number,
  schema: z.ZodType<T>,
): T {
  const name = `${what} ${sha256.slice(0, 16)}`
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new TurnlineError('corrupt_data', `${name} is not JSON`, { cause })
  }
  const found = (value as { version?: unknown } | null)?.version
  if (typeof found === 'number' && found > version) {
    throw new TurnlineError(
      'unsupported_version',
      `${name} has version ${found}; this build reads ${version}`,
    )
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success || parsed.data.sha256 !== sha256) {
    throw new TurnlineError('corrupt_data', `${name} is not a stored ${what}`)
  }
  return parsed.data
}

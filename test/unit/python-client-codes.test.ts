import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { HTTP_STATUS } from '../../src/contract/error-status.ts'
import { ERROR_CODES } from '../../src/contract/errors.ts'

/** The Python client's error codes and their statuses are the server's (src/contract). */
const source = readFileSync(
  new URL('../../clients/python/turnline/errors.py', import.meta.url),
  'utf8',
)

/** The text of the assignment `name: … = (` or `{` up to its closing line. */
function block(name: string, closer: ')' | '}'): string {
  const start = source.indexOf(`\n${name}:`)
  expect(start, `${name} in errors.py`).toBeGreaterThanOrEqual(0)
  return source.slice(start, source.indexOf(`\n${closer}`, start))
}

describe('the Python client error codes', () => {
  it('lists exactly the server codes, in order', () => {
    const codes = [...block('ERROR_CODES', ')').matchAll(/^\s+"([a-z_]+)",$/gm)].map((m) => m[1])
    expect(codes).toEqual([...ERROR_CODES])
  })

  it('maps each code to the server status', () => {
    const pairs = [...block('HTTP_STATUS', '}').matchAll(/^\s+"([a-z_]+)": (\d+),$/gm)]
    expect(Object.fromEntries(pairs.map((m) => [m[1], Number(m[2])]))).toEqual(HTTP_STATUS)
  })
})

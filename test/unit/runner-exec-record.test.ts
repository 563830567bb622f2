import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  parseExecRecord,
  recordedIdentity,
  serializeExecRecord,
} from '../../adapters/runner/exec-record.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/runner/${name}`, import.meta.url), 'utf8')

describe("the runner's exec records", () => {
  it('reads a format 1 record (written before spool identities were kept): no identity', () => {
    const record = parseExecRecord(fixture('exec-record-v1.json'))
    expect(record).toMatchObject({
      version: 1,
      exec_session_id: 'run-0123456789abcdef01234567',
      exit_code: 0,
      total_output_bytes: 14,
    })
    expect(recordedIdentity(record)).toBeUndefined()
  })

  it('writes format 2, with the identity of the spool, and reads it back', () => {
    const v1 = parseExecRecord(fixture('exec-record-v1.json'))
    const { version: _, ...fields } = v1
    const text = serializeExecRecord({
      ...fields,
      spool_identity: { dev: '2049', ino: '18446744073709551615', btime: '1796226834000123456' },
    })
    const record = parseExecRecord(text)
    expect(record.version).toBe(2)
    expect(recordedIdentity(record)).toEqual({
      dev: '2049',
      ino: '18446744073709551615',
      btime: '1796226834000123456',
    })
    // The first records of format 2 had no birth time.
    const { btime: _btime, ...older } = recordedIdentity(record) ?? {}
    const first = parseExecRecord(JSON.stringify({ ...JSON.parse(text), spool_identity: older }))
    expect(recordedIdentity(first)).toEqual({ dev: '2049', ino: '18446744073709551615' })
    expect(JSON.parse(text)).toMatchObject({ version: 2, spool_path: v1.spool_path })
  })

  it('refuses a format 2 record without an identity, and an unknown format', () => {
    const v1 = JSON.parse(fixture('exec-record-v1.json')) as Record<string, unknown>
    expect(() => parseExecRecord(JSON.stringify({ ...v1, version: 2 }))).toThrow()
    expect(() => parseExecRecord(JSON.stringify({ ...v1, version: 3 }))).toThrow()
    expect(() =>
      parseExecRecord(
        JSON.stringify({ ...v1, version: 2, spool_identity: { dev: '1', ino: '../x' } }),
      ),
    ).toThrow()
  })
})

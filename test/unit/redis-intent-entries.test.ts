import { describe, expect, it } from 'vitest'
import {
  decodeIntentEntry,
  encodeIntentEntry,
} from '../../adapters/shared/coordinator-redis-scripts.ts'

/**
 * The list items the Redis coordinators keep pending intents in (a stored format, read by every
 * build that serves the database): version 1 `1\n<id>\n<text>` as written before follow-ups were
 * kept as artifacts (and still for every short one), version 2 `2\n<id>\n<artifacts>\n<text>` for
 * a follow-up kept as an artifact.
 */
describe('Redis intent entries', () => {
  const artifacts = [
    { artifact_id: 'out_18bc9620417b56732a98256df25e4681', size: 90_036, lines: 3002 },
  ]

  it('reads a version 1 entry as written before, its text exactly', () => {
    const entry =
      '1\n0f9c2a4e-3b7d-4e21-9a61-5c0e8d7f1b23\nalso run the linter\nbefore you finish ü'
    expect(decodeIntentEntry(entry)).toEqual({
      id: '0f9c2a4e-3b7d-4e21-9a61-5c0e8d7f1b23',
      text: 'also run the linter\nbefore you finish ü',
    })
    expect(encodeIntentEntry({ id: 'i-1', text: 'a\nb' })).toBe('1\ni-1\na\nb')
  })

  it('writes version 2 only for a follow-up kept as an artifact, and reads it back', () => {
    const intent = { id: 'i-2', text: 'head\n[input of 90,036 bytes …]\ntail', artifacts }
    const entry = encodeIntentEntry(intent)
    expect(entry).toBe(`2\ni-2\n${JSON.stringify(artifacts)}\n${intent.text}`)
    expect(decodeIntentEntry(entry)).toEqual(intent)
    expect(encodeIntentEntry({ id: 'i-3', text: 't', artifacts: [] })).toBe('1\ni-3\nt')
  })

  it('an entry of another version, or a version 2 entry with unreadable references, is not read', () => {
    for (const entry of [
      '3\ni\n[]\nt',
      '2\ni\nnot json\nt',
      '2\ni\n[{"artifact_id":"x","size":1,"lines":1}]\nt',
      '2\ni\n[]\nt',
      '2\ni-without-references',
      '1\n',
      '',
    ]) {
      expect(decodeIntentEntry(entry), entry).toBeNull()
    }
  })
})

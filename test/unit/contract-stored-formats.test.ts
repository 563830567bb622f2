import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import { parseCheckpoint, serializeCheckpoint } from '../../src/contract/checkpoint.ts'
import {
  isDeletedMarker,
  parseDeletedMarker,
  serializeDeletedMarker,
} from '../../src/contract/deleted-marker.ts'
import { type ErrorCode, isTurnlineError } from '../../src/contract/errors.ts'
import { parsePendingIntent, serializePendingIntent } from '../../src/contract/pending-intent.ts'
import { parseVersionedLine, serializeVersioned } from '../../src/contract/serialize.ts'
import {
  parseSessionManifest,
  serializeSessionManifest,
} from '../../src/contract/session-manifest.ts'
import { parseTurnIndex, serializeTurnIndex } from '../../src/contract/turn-index.ts'

const bytes = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url)))
const text = (path: string) => new TextDecoder().decode(bytes(path))
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
const BATCHES = ['log/0000000000.json', 'log/0000000001.json', 'log/0000000002.json']

function failsWith(code: ErrorCode, run: () => unknown): string {
  try {
    run()
  } catch (error) {
    expect(isTurnlineError(error, code), String(error)).toBe(true)
    return (error as Error).message
  }
  throw new Error(`expected TurnlineError(${code})`)
}

describe('stored fixtures parse and re-serialize byte-identically', () => {
  it('manifest.json', () => {
    const manifest = parseSessionManifest(bytes('manifest.json'))
    expect(manifest).toMatchObject({ schema_version: 1, format_version: 1, last_batch: 2 })
    expect(serializeSessionManifest(manifest)).toBe(text('manifest.json'))
  })

  it('manifest.appended.json (the fs store: events.jsonl appended, events_bytes, no etag)', () => {
    const manifest = parseSessionManifest(bytes('manifest.appended.json'))
    expect(manifest.rollup_etag).toBeUndefined()
    expect(manifest.events_bytes).toBe(bytes('events.jsonl').length)
    expect(serializeSessionManifest(manifest)).toBe(text('manifest.appended.json'))
  })

  it('manifest.parts.json (format 2, a store that cannot append: the events in parts)', () => {
    const manifest = parseSessionManifest(bytes('manifest.parts.json'))
    expect(manifest).toMatchObject({
      format_version: 2,
      event_parts: [
        [0, 4],
        [4, 6],
      ],
    })
    expect(manifest.rollup_etag).toBeUndefined()
    expect(serializeSessionManifest(manifest)).toBe(text('manifest.parts.json'))
    const parts = ['events/0000000000-0000000004.jsonl', 'events/0000000004-0000000006.jsonl']
    expect(parts.map(text).join('')).toBe(text('events.jsonl'))
    const stored = JSON.parse(text('manifest.parts.json')) as Record<string, unknown>
    failsWith('unsupported_version', () =>
      parseSessionManifest(encode({ ...stored, format_version: 3 })),
    )
    // parts only with format 2, contiguous, covering the head up to rolled_through
    failsWith('corrupt_data', () => parseSessionManifest(encode({ ...stored, format_version: 1 })))
    for (const event_parts of [
      [[0, 4]],
      [
        [0, 4],
        [5, 6],
      ],
      [
        [1, 4],
        [4, 6],
      ],
      [
        [0, 6],
        [6, 6],
      ],
    ]) {
      failsWith('corrupt_data', () => parseSessionManifest(encode({ ...stored, event_parts })))
    }
    failsWith('corrupt_data', () => parseSessionManifest(encode({ ...stored, rollup_etag: 'x' })))
    const { event_parts: _, ...without } = stored
    failsWith('corrupt_data', () => parseSessionManifest(encode(without)))
    // after a cut of the head: the first part holds it, read from it on
    const cut = { ...stored, rolled_head_seq: 5, event_count: 1, event_parts: [[4, 6]] }
    expect(parseSessionManifest(encode(cut)).rolled_head_seq).toBe(5)
    failsWith('corrupt_data', () =>
      parseSessionManifest(
        encode({
          ...cut,
          rolled_head_seq: 4,
          event_parts: [
            [0, 4],
            [4, 6],
          ],
        }),
      ),
    )
  })

  it('intents/0000000003.json', () => {
    const intent = parsePendingIntent(bytes('intents/0000000003.json'))
    expect(intent).toMatchObject({ format: 'turnline.pending-intent', version: 1 })
    expect(intent.text).toContain('\n')
    expect(serializePendingIntent(intent)).toBe(text('intents/0000000003.json'))
    const stored = JSON.parse(text('intents/0000000003.json')) as Record<string, unknown>
    failsWith('unsupported_version', () => parsePendingIntent(encode({ ...stored, version: 3 })))
    failsWith('corrupt_data', () => parsePendingIntent(encode({ ...stored, id: 'has space' })))
    failsWith('corrupt_data', () => parsePendingIntent(encode({ ...stored, format: 'other' })))
  })

  it('intents/0000000004.json (version 2: a follow-up kept as an artifact, its preview as text)', () => {
    const intent = parsePendingIntent(bytes('intents/0000000004.json'))
    if (intent.version !== 2) throw new Error('not a version 2 pending intent')
    expect(intent.input_artifacts).toEqual([
      { artifact_id: 'out_18bc9620417b56732a98256df25e4681', size: 90_036, lines: 3002 },
    ])
    expect(intent.text).toContain('kept whole as artifact out_18bc9620417b56732a98256df25e4681;')
    expect(serializePendingIntent(intent)).toBe(text('intents/0000000004.json'))
    const stored = JSON.parse(text('intents/0000000004.json')) as Record<string, unknown>
    failsWith('unsupported_version', () => parsePendingIntent(encode({ ...stored, version: 3 })))
    failsWith('corrupt_data', () => parsePendingIntent(encode({ ...stored, input_artifacts: [] })))
    const { input_artifacts: _kept, ...plain } = stored
    failsWith('corrupt_data', () => parsePendingIntent(encode(plain)))
  })

  it('deleted/0000000003.json (the marker a deleted session leaves in its log)', () => {
    const marker = parseDeletedMarker(bytes('deleted/0000000003.json'))
    expect(marker).toMatchObject({ format: 'turnline.deleted', version: 1 })
    expect(serializeDeletedMarker(marker)).toBe(text('deleted/0000000003.json'))
    expect(isDeletedMarker(bytes('deleted/0000000003.json'))).toBe(true)
    expect(isDeletedMarker(bytes('log/0000000002.json'))).toBe(false)
    failsWith('unsupported_version', () => parseDeletedMarker(encode({ ...marker, version: 2 })))
    failsWith('corrupt_data', () => parseBatch(bytes('deleted/0000000003.json')))
  })

  it('index/turns.json', () => {
    const index = parseTurnIndex(bytes('index/turns.json'))
    expect(index.entries.map((entry) => entry.turn_number)).toEqual([1, 2])
    expect(serializeTurnIndex(index)).toBe(text('index/turns.json'))
  })

  it.each(BATCHES)('%s', (path) => {
    const batch = parseBatch(bytes(path))
    expect(serializeBatch(batch)).toBe(text(path))
  })

  it('state/0000000001.json', () => {
    const checkpoint = parseCheckpoint(bytes('state/0000000001.json'))
    expect(checkpoint.applied_intents).toHaveLength(1)
    expect(serializeCheckpoint(checkpoint)).toBe(text('state/0000000001.json'))
  })

  it('reads a turns.json written by VT Code (no format_version, pretty, nanosecond offset time)', () => {
    const index = parseTurnIndex(bytes('index/turns.vtcode.json'))
    expect(index.entries[0]?.ts).toBe('2026-08-23T01:02:09.250123456+00:00')
    expect(serializeTurnIndex(index)).toMatch(
      /^\{"entries":\[\{"turn_number":1,.*"format_version":1\}$/,
    )
  })
})

describe('the store fixtures agree with each other', () => {
  const lines = text('events.jsonl').split('\n').slice(0, -1)

  it('events.jsonl is the batches’ events, in seq order, as canonical lines', () => {
    const fromBatches = BATCHES.flatMap((path) =>
      parseBatch(bytes(path)).events.map(serializeVersioned),
    )
    expect(lines).toEqual(fromBatches)
    expect(lines.map((line) => serializeVersioned(parseVersionedLine(line)))).toEqual(lines)
  })

  it('turn index offsets frame whole turns of events.jsonl', () => {
    const log = bytes('events.jsonl')
    for (const entry of parseTurnIndex(bytes('index/turns.json')).entries) {
      const turn = new TextDecoder().decode(log.slice(entry.start_offset, entry.end_offset))
      const events = turn
        .split('\n')
        .slice(0, -1)
        .map((line) => parseVersionedLine(line).event.type)
      expect(events).toHaveLength(entry.event_count)
      expect(events[0]).toBe('turn.started')
      expect(['turn.completed', 'turn.failed']).toContain(events.at(-1))
    }
  })

  it('manifest counters match the log', () => {
    const manifest = parseSessionManifest(bytes('manifest.json'))
    expect(manifest.event_count).toBe(lines.length)
    expect(manifest.last_seq).toBe(lines.length - 1)
    expect(manifest.rolled_through).toBe(lines.length)
  })
})

describe('versions', () => {
  const manifest = JSON.parse(text('manifest.json')) as Record<string, unknown>

  it('rejects a VT Code store layout version other than 1', () => {
    const message = failsWith('unsupported_version', () =>
      parseSessionManifest(encode({ ...manifest, schema_version: 2 })),
    )
    expect(message).toMatch(/schema_version 2/)
  })

  it('rejects an unknown manifest format_version, and a manifest without one', () => {
    failsWith('unsupported_version', () =>
      parseSessionManifest(encode({ ...manifest, format_version: 3 })),
    )
    const { format_version: _, ...plainVtcode } = manifest
    failsWith('corrupt_data', () => parseSessionManifest(encode(plainVtcode)))
  })

  it('rejects unknown batch, checkpoint and turn index versions', () => {
    const batch = JSON.parse(text(BATCHES[1] ?? '')) as Record<string, unknown>
    failsWith('unsupported_version', () => parseBatch(encode({ ...batch, version: 8 })))
    const checkpoint = JSON.parse(text('state/0000000001.json')) as Record<string, unknown>
    failsWith('unsupported_version', () => parseCheckpoint(encode({ ...checkpoint, version: 5 })))
    failsWith('unsupported_version', () => parseTurnIndex('{"entries":[],"format_version":2}'))
  })
})

describe('corrupt stored documents', () => {
  const batchText = text(BATCHES[1] ?? '')
  const batch = JSON.parse(batchText) as Record<string, unknown>

  it('a truncated batch is corrupt_data', () => {
    const message = failsWith('corrupt_data', () =>
      parseBatch(batchText.slice(0, batchText.length / 2)),
    )
    expect(message).toMatch(/^batch: invalid JSON/)
    failsWith('corrupt_data', () => parseBatch(new Uint8Array()))
  })

  it('invalid UTF-8 is corrupt_data', () => {
    const raw = bytes(BATCHES[1] ?? '')
    raw[raw.length - 3] = 0xff
    expect(failsWith('corrupt_data', () => parseBatch(raw))).toMatch(/UTF-8/)
  })

  it('a document of another format is corrupt_data', () => {
    expect(failsWith('corrupt_data', () => parseBatch(text('state/0000000001.json')))).toMatch(
      /"format" is "turnline.checkpoint", expected "turnline.batch"/,
    )
    failsWith('corrupt_data', () => parseCheckpoint(batchText))
    failsWith('corrupt_data', () => parseBatch('[1]'))
  })

  it('a batch without events, or with an event VT Code could not read, is corrupt_data', () => {
    expect(failsWith('corrupt_data', () => parseBatch(encode({ ...batch, events: [] })))).toMatch(
      /events/,
    )
    const events = [
      {
        schema_version: '0.11.0',
        event: { type: 'item.completed', item: { id: 'x', type: 'todo' } },
      },
    ]
    expect(failsWith('corrupt_data', () => parseBatch(encode({ ...batch, events })))).toMatch(
      /batch 1 event 0: invalid shape \(item\.type/,
    )
    const spelled = batchText.replace('"output_tokens":9', '"output_tokens":9.0')
    expect(failsWith('corrupt_data', () => parseBatch(spelled))).toMatch(
      /event 2: usage\.output_tokens/,
    )
  })

  it('keeps an unknown event inside a batch byte for byte', () => {
    const future = '{"type":"future.event","ratio":1.50,"keys":{"b":1,"10":2}}'
    const withUnknown = batchText.replace(
      '"events":[',
      `"events":[{"schema_version":"0.12.0","event":${future}},`,
    )
    const parsed = parseBatch(withUnknown)
    expect(parsed.events[0]?.event).toMatchObject({
      type: 'unknown',
      original_type: 'future.event',
    })
    expect(serializeBatch(parsed)).toBe(withUnknown)
  })

  it('fields are checked: timestamps, counters, null optionals, the applied-intent window', () => {
    failsWith('corrupt_data', () => parseBatch(encode({ ...batch, committed_at: 'yesterday' })))
    failsWith('corrupt_data', () => parseBatch(encode({ ...batch, first_seq: -1 })))
    failsWith('corrupt_data', () => parseBatch(encode({ ...batch, turn_id: null })))
    const checkpoint = JSON.parse(text('state/0000000001.json')) as Record<string, unknown>
    const window = Array.from({ length: 65 }, (_, i) => `intent-${i}`)
    failsWith('corrupt_data', () =>
      parseCheckpoint(encode({ ...checkpoint, applied_intents: window })),
    )
    failsWith('corrupt_data', () =>
      parseSessionManifest(encode({ ...manifestOf(), status: 'failed' })),
    )
    failsWith('corrupt_data', () =>
      parseTurnIndex(
        '{"entries":[{"turn_number":1,"start_offset":9,"end_offset":3,"event_count":1,"ts":"2026-08-23T01:02:03Z"}]}',
      ),
    )
  })

  it('refuses to write an invalid document', () => {
    const valid = parseBatch(batchText)
    failsWith('internal', () => serializeBatch({ ...valid, events: [] }))
    failsWith('internal', () =>
      serializeSessionManifest({ ...manifestOf(), last_seq: -2 } as never),
    )
  })
})

function manifestOf() {
  return parseSessionManifest(bytes('manifest.json'))
}

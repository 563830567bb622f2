import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { RequestSegmentSchema } from '../../src/contract/request-segment.ts'
import { parseEventLine, serializeEvent } from '../../src/contract/serialize.ts'
import { ThreadCompactBoundaryEventSchema } from '../../src/contract/thread-lifecycle-events.ts'
import {
  catalogHash,
  compactBoundaryEvent,
  openSegment,
  prefixHash,
  resolveSegment,
  type SegmentBasis,
  segmentId,
} from '../../src/core/compaction/segment-boundary.ts'
import type { ToolDefinition } from '../../src/ports/model-client.ts'

const lookup: ToolDefinition = {
  name: 'lookup',
  description: 'Look up an order',
  parameters: { type: 'object', properties: { id: { type: 'string' } } },
}
const refund: ToolDefinition = { name: 'refund', description: 'Refund an order', parameters: {} }

/** Node's own SHA-256 over text + 0xFF, as an independent reference. */
const reference = (text: string) =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from([0xff])]))
    .digest('hex')
    .slice(0, 16)

const basis: SegmentBasis = {
  systemPrompt: 'You are a careful coding agent.',
  instructions: 'You are a careful coding agent.',
  tools: [lookup],
  model: 'gpt-4o',
  provider: 'openai',
  mode: 'default',
}

describe('request segment hashes', () => {
  it('are SHA-256 of the bytes + 0xFF, 16 lowercase hex characters', async () => {
    expect(await prefixHash('')).toBe('a8100ae6aa1940d0')
    expect(await prefixHash('You are a careful coding agent.')).toBe('e7e9488bb63dd710')
    expect(await catalogHash([lookup])).toBe('5f73916143e10c47')
    for (const text of ['', 'ü ✓ 模型 😀', 'x'.repeat(100_000)]) {
      expect(await prefixHash(text)).toBe(reference(text))
    }
    expect(await catalogHash([])).toBeUndefined()
  })

  it('hash the compact JSON of the catalog, whether a definition was hashed before or not', async () => {
    const catalog = [lookup, refund]
    const expected = reference(JSON.stringify(catalog))
    expect(await catalogHash(catalog)).toBe(expected)
    expect(await catalogHash(catalog)).toBe(expected)
    expect(await catalogHash(catalog.map((definition) => structuredClone(definition)))).toBe(
      expected,
    )
    expect(await catalogHash([refund, lookup])).toBe(reference(JSON.stringify([refund, lookup])))
  })

  it('numbers segments segment-%08d', () => {
    expect(segmentId(2)).toBe('segment-00000002')
    expect(segmentId(123_456_789)).toBe('segment-123456789')
  })

  it('change exactly when the prompt or the ordered catalog changes', async () => {
    const first = await openSegment(1, basis)
    expect(RequestSegmentSchema.parse(first)).toEqual(first)
    const same = await openSegment(7, { ...basis, model: 'gpt-5', mode: 'plan' })
    expect([same.prefix_hash, same.catalog_hash]).toEqual([first.prefix_hash, first.catalog_hash])
    const prompt = await openSegment(2, { ...basis, systemPrompt: `${basis.systemPrompt} ` })
    expect(prompt.prefix_hash).not.toBe(first.prefix_hash)
    expect(prompt.catalog_hash).toBe(first.catalog_hash)
    const reordered = await openSegment(2, { ...basis, tools: [refund, lookup] })
    const ordered = await openSegment(2, { ...basis, tools: [lookup, refund] })
    expect(reordered.catalog_hash).not.toBe(ordered.catalog_hash)
    expect(ordered.catalog_hash).not.toBe(first.catalog_hash)
    expect(ordered.prefix_hash).toBe(first.prefix_hash)
    const schema = await openSegment(2, {
      ...basis,
      tools: [{ ...lookup, parameters: { type: 'object' } }],
    })
    expect(schema.catalog_hash).not.toBe(first.catalog_hash)
    const none = await openSegment(2, { ...basis, tools: [] })
    expect(none.catalog_hash).toBeUndefined()
  })
})

describe('segment boundaries', () => {
  it('stay in the segment while nothing changes, open one on each kind of change', async () => {
    const start = await resolveSegment(undefined, basis)
    expect(start).toMatchObject({ opened: true, segment: { id: 'segment-00000001' } })
    const current = start.segment
    expect(await resolveSegment(current, basis)).toEqual({
      segment: current,
      opened: false,
      reasons: [],
    })
    const cases: [Partial<SegmentBasis> | 'compaction' | 'recovery', string[]][] = [
      ['compaction', ['compaction']],
      ['recovery', ['recovery']],
      [{ model: 'gpt-5' }, ['model']],
      [{ provider: 'azure' }, ['provider']],
      [{ mode: 'plan' }, ['mode']],
      [{ instructions: 'new', systemPrompt: 'new' }, ['instructions']],
      [{ systemPrompt: 'orientation + prompt' }, ['system_prompt']],
      [{ tools: [lookup, refund] }, ['tool_catalog']],
      [{ model: 'gpt-5', tools: [] }, ['model', 'tool_catalog']],
    ]
    for (const [change, reasons] of cases) {
      const result =
        typeof change === 'string'
          ? await resolveSegment(current, basis, change)
          : await resolveSegment(current, { ...basis, ...change })
      expect(result.reasons, JSON.stringify(change)).toEqual(reasons)
      expect(result.opened).toBe(true)
      expect(result.segment.id).toBe('segment-00000002')
    }
  })
})

describe('thread.compact_boundary', () => {
  it('fills previous and new segment ids, prefix and catalog hashes', async () => {
    const previous = await openSegment(1, basis)
    const next = await openSegment(2, basis)
    const event = compactBoundaryEvent({
      threadId: 'thread-1',
      trigger: 'auto',
      mode: 'local',
      originalMessageCount: 42,
      compactedMessageCount: 9,
      historyArtifactPath: '.vtcode/history/s_0003_20260823T010203Z.jsonl',
      previous,
      next,
    })
    expect(ThreadCompactBoundaryEventSchema.parse(event)).toEqual(event)
    const line = serializeEvent(event)
    expect(line).toBe(
      '{"type":"thread.compact_boundary","thread_id":"thread-1","trigger":"auto","mode":"local",' +
        '"original_message_count":42,"compacted_message_count":9,' +
        '"history_artifact_path":".vtcode/history/s_0003_20260823T010203Z.jsonl",' +
        '"previous_segment_id":"segment-00000001","new_segment_id":"segment-00000002",' +
        '"previous_prefix_hash":"e7e9488bb63dd710","new_prefix_hash":"e7e9488bb63dd710",' +
        '"previous_catalog_hash":"5f73916143e10c47","new_catalog_hash":"5f73916143e10c47"}',
    )
    expect(parseEventLine(line)).toEqual(event)
  })

  it('omits what does not exist: no previous segment, no tools, no artifact', async () => {
    const next = await openSegment(1, { ...basis, tools: [] })
    const event = compactBoundaryEvent({
      threadId: 't',
      trigger: 'manual',
      mode: 'local',
      originalMessageCount: 11,
      compactedMessageCount: 3,
      next,
    })
    expect(Object.keys(event)).toEqual([
      'type',
      'thread_id',
      'trigger',
      'mode',
      'original_message_count',
      'compacted_message_count',
      'new_segment_id',
      'new_prefix_hash',
    ])
  })
})

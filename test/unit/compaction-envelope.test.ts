import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  type MemoryEnvelope,
  memoryEnvelopePath,
  parseMemoryEnvelope,
  serializeMemoryEnvelope,
} from '../../src/contract/memory-envelope.ts'
import { buildMemoryEnvelope } from '../../src/core/compaction/build-envelope.ts'
import {
  insertMemoryEnvelope,
  isMemoryEnvelopeMessage,
  renderMemoryEnvelope,
} from '../../src/core/compaction/render-envelope.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/compaction/${name}`, import.meta.url), 'utf8')

describe('memory envelope (schema v3)', () => {
  it('reads the v3 fixture and writes it back byte for byte (serde pretty, nulls for absent)', () => {
    const text = fixture('memory-envelope-v3.json')
    const envelope = parseMemoryEnvelope(new TextEncoder().encode(text))
    expect(envelope).toMatchObject({
      schema_version: 3,
      objective: 'Ship the retry policy for the billing webhook',
      spec_summary: undefined,
      pending_intents: [
        { id: '0b6f4a52-7c1e-4d8e-9a51-3f2d4c6b8e10', text: 'Also log the retry count' },
      ],
      applied_intent_ids: ['4f1c2b3a-5d6e-4f70-8a9b-0c1d2e3f4a5b'],
    })
    expect(serializeMemoryEnvelope(envelope)).toBe(text)
  })

  it('reads a legacy v2 envelope (no intent fields) and upgrades it when written', () => {
    const envelope = parseMemoryEnvelope(fixture('memory-envelope-v2.json'))
    expect(envelope).toMatchObject({
      schema_version: 2,
      pending_intents: [],
      applied_intent_ids: [],
      objective: undefined,
    })
    const written = JSON.parse(serializeMemoryEnvelope(envelope))
    expect(written.schema_version).toBe(3)
    expect(written.pending_intents).toEqual([])
    expect(written.objective).toBeNull()
    expect(Object.keys(written).at(-1)).toBe('generated_at')
  })

  it('reads what serde accepts: absent optionals and lists', () => {
    const envelope = parseMemoryEnvelope('{"summary":"s","generated_at":"2026-01-01T00:00:00Z"}')
    expect(envelope).toMatchObject({
      session_id: '',
      constraints: [],
      grounded_facts: [],
      pending_intents: [],
    })
    expect(envelope.schema_version).toBeUndefined()
  })

  it('refuses newer versions, bad shapes and over-full intent lists', () => {
    const base = JSON.parse(fixture('memory-envelope-v3.json'))
    expect(() => parseMemoryEnvelope(JSON.stringify({ ...base, schema_version: 4 }))).toThrow(
      expect.objectContaining({ code: 'unsupported_version' }),
    )
    expect(() => parseMemoryEnvelope('[]')).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
    expect(() => parseMemoryEnvelope('{')).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
    expect(() => parseMemoryEnvelope(JSON.stringify({ ...base, summary: 3 }))).toThrow(/summary/)
    const seventeen = Array.from({ length: 17 }, (_, i) => ({ id: `i${i}`, text: 't' }))
    expect(() =>
      parseMemoryEnvelope(JSON.stringify({ ...base, pending_intents: seventeen })),
    ).toThrow(expect.objectContaining({ code: 'corrupt_data' }))
    const ids = Array.from({ length: 65 }, (_, i) => `id${i}`)
    expect(() => parseMemoryEnvelope(JSON.stringify({ ...base, applied_intent_ids: ids }))).toThrow(
      /applied_intent_ids/,
    )
  })

  it('names the envelope after the history artifact', () => {
    expect(memoryEnvelopePath('.vtcode/history/s_0007_20260823T014500Z.jsonl')).toBe(
      '.vtcode/history/s_0007_20260823T014500Z.memory.json',
    )
  })
})

describe('rendering the envelope', () => {
  it('matches the golden text, sections in the reference order', () => {
    const envelope = parseMemoryEnvelope(fixture('memory-envelope-v3.json'))
    expect(renderMemoryEnvelope(envelope)).toBe(fixture('memory-envelope-v3.rendered.txt'))
  })

  it('renders only the summary when nothing else is set', () => {
    const envelope = parseMemoryEnvelope(fixture('memory-envelope-v2.json'))
    expect(renderMemoryEnvelope({ ...envelope, touched_files: [] })).toBe(
      '[Session Memory Envelope]\nSummary:\nCompacted earlier conversation state.',
    )
  })

  it('strips any prior envelope before inserting one, at the start or before the last user/summary', () => {
    const envelope = parseMemoryEnvelope(fixture('memory-envelope-v3.json'))
    const old = { role: 'system' as const, content: '[Session Memory Envelope]\nSummary:\nold' }
    const history = [
      { role: 'system' as const, content: 'Previous conversation summary:\nearlier' },
      old,
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'a' },
      { role: 'user' as const, content: 'second' },
      { role: 'assistant' as const, content: 'b' },
    ]
    const atStart = insertMemoryEnvelope(history, envelope, 'start')
    expect(atStart.filter(isMemoryEnvelopeMessage)).toHaveLength(1)
    expect(atStart[0]?.content).toBe(renderMemoryEnvelope(envelope))
    const beforeLast = insertMemoryEnvelope(history, envelope, 'before_last_user_or_summary')
    expect(beforeLast.map((m) => m.content.slice(0, 12))).toEqual([
      'Previous con',
      'first',
      'a',
      '[Session Mem',
      'second',
      'b',
    ])
    expect(beforeLast).not.toContain(old)
  })
})

describe('building the next envelope', () => {
  const prior: MemoryEnvelope = parseMemoryEnvelope(fixture('memory-envelope-v3.json'))

  it('merges over the prior envelope with VT Code limits', () => {
    const next = buildMemoryEnvelope({
      sessionId: prior.session_id,
      summary: '  new summary  ',
      generatedAt: '2026-08-23T03:00:00Z',
      historyArtifactPath: '.vtcode/history/next.jsonl',
      prior,
      update: {
        constraints: ['keep  the public API unchanged', 'c3', 'c4', 'c5', 'c6'],
        touched_files: ['src/billing/webhook.ts', 'src/new.ts'],
        grounded_facts: [
          { fact: 'f1', source: 'tool:exec' },
          { fact: 'F1', source: 'tool:exec2' },
        ],
      },
      pendingIntents: [],
      appliedIntentIds: ['0b6f4a52-7c1e-4d8e-9a51-3f2d4c6b8e10'],
    })
    expect(next.summary).toBe('new summary')
    expect(next.objective).toBe(prior.objective)
    // case-insensitive dedup moves the entry to the end; only the 5 newest stay
    expect(next.constraints).toEqual(['keep the public API unchanged', 'c3', 'c4', 'c5', 'c6'])
    expect(next.touched_files).toEqual([
      'test/integration/webhook.test.ts',
      'src/billing/webhook.ts',
      'src/new.ts',
    ])
    expect(next.grounded_facts.map((f) => f.source)).toEqual([
      'tool:read_file',
      'user_assertion',
      'tool:exec2',
    ])
    expect(next.pending_intents).toEqual([])
    expect(next.applied_intent_ids).toEqual([
      '4f1c2b3a-5d6e-4f70-8a9b-0c1d2e3f4a5b',
      '0b6f4a52-7c1e-4d8e-9a51-3f2d4c6b8e10',
    ])
    expect(next.history_artifact_path).toBe('.vtcode/history/next.jsonl')
    expect(parseMemoryEnvelope(serializeMemoryEnvelope(next))).toEqual(next)
  })

  it('keeps the 64 newest applied intent ids and refuses more than 16 pending intents', () => {
    const ids = Array.from({ length: 70 }, (_, i) => `id-${i}`)
    const next = buildMemoryEnvelope({
      sessionId: 's',
      summary: 's',
      generatedAt: 'now',
      appliedIntentIds: ids,
    })
    expect(next.applied_intent_ids).toHaveLength(64)
    expect(next.applied_intent_ids[0]).toBe('id-6')
    const pending = Array.from({ length: 17 }, (_, i) => ({ id: `p${i}`, text: 't' }))
    expect(() =>
      buildMemoryEnvelope({
        sessionId: 's',
        summary: 's',
        generatedAt: 'now',
        pendingIntents: pending,
      }),
    ).toThrow(/at most 16/)
  })
})

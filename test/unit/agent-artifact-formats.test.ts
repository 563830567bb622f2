import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  parseHandoffDocument,
  serializeHandoffDocument,
} from '../../src/contract/handoff-document.ts'
import { parseLoopState, serializeLoopState } from '../../src/contract/loop-state.ts'
import { parseProgressLedger, serializeProgressLedger } from '../../src/contract/progress-ledger.ts'
import { appendEntry, foldEntryText, parseEntries } from '../../src/core/artifacts/loop-memory.ts'
import {
  applyProgressUpdate,
  completionRatio,
  newLedger,
  noteAdvance,
  noteStall,
  progressSummary,
} from '../../src/core/artifacts/progress.ts'
import { markdownSummary } from '../../src/core/orientation/artifact-summaries.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/agent/${name}`, import.meta.url), 'utf8')

describe('stored artifact formats', () => {
  it('progress.json parses and re-serializes byte-identically', () => {
    const ledger = parseProgressLedger(fixture('progress.json'))
    expect(ledger.milestones).toHaveLength(3)
    expect(serializeProgressLedger(ledger)).toBe(fixture('progress.json'))
    expect(progressSummary(ledger)).toBe(
      'Goal: ship the feature | Completion: 33% | Confidence: 0.90 | STALLED',
    )
  })

  it('current_handoff.json parses and re-serializes byte-identically', () => {
    const document = parseHandoffDocument(fixture('current_handoff.json'))
    expect(document.handoff.boundary_status[1]).toEqual({
      feature: 'signup',
      status: 'in_progress',
      notes: 'form only',
    })
    expect(serializeHandoffDocument(document)).toBe(fixture('current_handoff.json'))
  })

  it('loop-<id>.json parses and re-serializes byte-identically', () => {
    const state = parseLoopState(fixture('loop-nightly.json'))
    expect(state).toMatchObject({ loop_id: 'nightly', step_index: 2, status: 'running' })
    expect(serializeLoopState(state)).toBe(fixture('loop-nightly.json'))
  })

  it('a loop with a schedule and a stopped run parses and re-serializes byte-identically', () => {
    const state = parseLoopState(fixture('loop-hourly-run.json'))
    expect(state).toMatchObject({
      run: { trigger: 'schedule', state: 'stopped', stop_reason: 'budget' },
      schedule: { cron: '0 * * * *' },
    })
    expect(serializeLoopState(state)).toBe(fixture('loop-hourly-run.json'))
  })

  it('refuses an unknown ledger version and corrupt JSON with typed errors', () => {
    const future = fixture('progress.json').replace('"schema_version": 1', '"schema_version": 2')
    expect(() => parseProgressLedger(future)).toThrow(/unknown schema_version/)
    try {
      parseProgressLedger('{')
    } catch (error) {
      expect(isTurnlineError(error, 'corrupt_data')).toBe(true)
    }
  })
})

describe('loop memory', () => {
  it('writes the header once and one stamped line per entry (VT Code format)', () => {
    const first = appendEntry('notes', '', '  first  ', Date.UTC(2026, 0, 1))
    expect(first).toBe('# Loop Notes\n\n- [2026-01-01T00:00:00Z] first\n')
    const second = appendEntry('notes', first, 'two\nlines', Date.UTC(2026, 0, 1, 0, 1))
    expect(second).toBe(`${first}- [2026-01-01T00:01:00Z] two lines\n`)
    expect(appendEntry('decisions', '', 'x', 0).startsWith('# Loop Decisions\n\n')).toBe(true)
    expect(appendEntry('notes', first, ' \n ', 0)).toBe(first)
    expect(foldEntryText('a\r\n  b')).toBe('a b')
  })

  it('parses entries back, ignoring other lines', () => {
    expect(parseEntries(fixture('notes.md'))).toEqual([
      { at: '2026-01-01T00:00:00Z', text: 'the build needs node 20' },
      { at: '2026-01-01T00:01:00Z', text: 'S3 answers 412 to a stale If-Match' },
    ])
  })
})

describe('progress ledger', () => {
  it('advances and stalls as VT Code nudges confidence', () => {
    const fresh = newLedger('s1', 'goal', 't0')
    expect(completionRatio(fresh)).toBe(1)
    const stalled = noteStall(noteStall(fresh, 's1', 't1'), 's2', 't2')
    expect(stalled).toMatchObject({ stalled_since: 't1', stall_count: 2, confidence: 0.8 })
    const advanced = noteAdvance(stalled, 's3', 't3')
    expect(advanced).toMatchObject({
      stalled_since: null,
      stall_count: 0,
      advances: 1,
      confidence: 0.85,
      session_id: 's3',
    })
  })

  it('applies updates field by field and reports unknown milestones', () => {
    const base = applyProgressUpdate(
      newLedger('s', 'g', 't'),
      { milestones: [{ id: 'a', description: 'A', status: 'not_started' }] },
      's',
      't',
    ).ledger
    const { ledger, unknownMilestones } = applyProgressUpdate(
      base,
      {
        milestone_status: [
          { id: 'a', status: 'done' },
          { id: 'zz', status: 'done' },
        ],
      },
      's',
      't',
    )
    expect(ledger.milestones[0]?.status).toBe('done')
    expect(ledger.goal).toBe('g')
    expect(unknownMilestones).toEqual(['zz'])
  })
})

describe('markdown summaries', () => {
  it('take the first four content lines, skip headings, cut at 280 characters', () => {
    expect(markdownSummary('# T\n\na\n\n## h\nb\nc\nd\ne\n', 'Spec')).toBe('Spec: a | b | c | d')
    expect(markdownSummary('# only a heading\n', 'Spec')).toBeUndefined()
    const long = markdownSummary('x'.repeat(400), 'Spec') ?? ''
    expect(long.endsWith('...')).toBe(true)
    expect(long.length).toBe('Spec: '.length + 280)
  })
})

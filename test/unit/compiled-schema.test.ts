import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { HistoryDeltaSchema, parseBatch } from '../../src/contract/batch.ts'
import {
  CheckpointWriteSchema,
  parseCheckpoint,
  serializeCheckpoint,
} from '../../src/contract/checkpoint.ts'
import {
  compiledSchema,
  USES_BEFORE_COMPILING,
  useSchemaCompiler,
} from '../../src/contract/compiled-schema.ts'
import { describeIssues } from '../../src/contract/corrupt-data.ts'
import { SessionManifestSchema } from '../../src/contract/session-manifest.ts'
import { validateForWrite } from '../../src/contract/stored-document.ts'
import { TurnIndexSchema } from '../../src/contract/turn-index.ts'

const STORE = join(import.meta.dirname, '../fixtures/store')
const SESSION = join(
  STORE,
  'v3-session/t1/default/.vtcode/sessions/session-20261205T095510Z-7139323fb01216ea',
)

function json(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'))
}

/** What the runtime parser and the compiled one answer for `value`: data, or the issues' text. */
function both(schema: z.ZodType, value: unknown) {
  const answer = (checked: z.ZodSafeParseResult<unknown>) =>
    checked.success ? { data: checked.data } : { issues: describeIssues(checked.error) }
  return {
    runtime: answer(schema.safeParse(value)),
    compiled: answer(compiledSchema(schema).safeParse(value)),
  }
}

const batches = readdirSync(join(SESSION, 'log')).map((name) =>
  parseBatch(readFileSync(join(SESSION, 'log', name))),
)

describe('compiledSchema', () => {
  it('uses every schema as it is until a compiler is installed', () => {
    expect(compiledSchema(TurnIndexSchema)).toBe(TurnIndexSchema)
  })

  it('compiles the write schemas of a commit at their USES_BEFORE_COMPILING-th check (a zod that stops compiling them fails here)', () => {
    useSchemaCompiler(z.compile)
    for (const schema of [
      TurnIndexSchema,
      SessionManifestSchema,
      HistoryDeltaSchema,
      CheckpointWriteSchema,
    ]) {
      for (let use = 1; use < USES_BEFORE_COMPILING; use++) {
        expect(compiledSchema(schema)).toBe(schema)
      }
      expect(compiledSchema(schema)).not.toBe(schema)
      expect(compiledSchema(schema)).toBe(compiledSchema(schema))
    }
  })

  it('answers what the runtime parser answers for the stored fixtures', () => {
    const histories = batches.flatMap((batch) => (batch.history ? [batch.history] : []))
    expect(histories.length).toBeGreaterThan(3)
    for (const history of histories) {
      const { runtime, compiled } = both(HistoryDeltaSchema, history)
      expect(runtime).toHaveProperty('data')
      expect(compiled).toEqual(runtime)
    }
    for (const file of [join(STORE, 'index/turns.json'), join(SESSION, 'index/turns.json')]) {
      const { runtime, compiled } = both(TurnIndexSchema, json(file))
      expect(runtime).toHaveProperty('data')
      expect(compiled).toEqual(runtime)
    }
    for (const file of ['manifest.json', 'manifest.parts.json', 'manifest.appended.json']) {
      const { runtime, compiled } = both(SessionManifestSchema, json(join(STORE, file)))
      expect(runtime).toHaveProperty('data')
      expect(compiled).toEqual(runtime)
    }
  })

  it('writes the stored checkpoints back byte for byte, their state checked apart', () => {
    const files = [
      join(STORE, 'state/0000000001.json'),
      join(SESSION, 'state/0000000016.json'),
      join(
        STORE,
        'v4-session/t1/default/.vtcode/sessions/session-20261205T123423Z-3910284379a94f4a/state/0000000016.json',
      ),
    ]
    for (const file of files) {
      const text = readFileSync(file, 'utf8').trim()
      const checkpoint = parseCheckpoint(text)
      const { runtime, compiled } = both(CheckpointWriteSchema, checkpoint)
      expect(compiled).toEqual(runtime)
      if (checkpoint.version === 4) expect(serializeCheckpoint(checkpoint)).toBe(text)
    }
    const checkpoint = parseCheckpoint(readFileSync(files[1] as string, 'utf8'))
    expect(() => serializeCheckpoint({ ...checkpoint, state: { n: Number.NaN } })).toThrow(
      'cannot write checkpoint: state',
    )
    expect(() => serializeCheckpoint({ ...checkpoint, turn_count: -1 })).toThrow(
      'cannot write checkpoint: turn_count',
    )
  })

  it('fails with the runtime parser’s issues', () => {
    const entry = {
      turn_number: 2,
      start_offset: 10,
      end_offset: 40,
      event_count: 3,
      ts: '2026-12-06T04:00:00Z',
    }
    const invalid = [
      { entries: [{ ...entry, end_offset: 5 }] }, // the refinement
      { entries: [{ ...entry, ts: 'yesterday' }] },
      { entries: [{ ...entry, turn_number: 0 }], format_version: 2 },
      { entries: 'none' },
      null,
    ]
    for (const value of invalid) {
      const { runtime, compiled } = both(TurnIndexSchema, value)
      expect(runtime).toHaveProperty('issues')
      expect(compiled).toEqual(runtime)
      expect(() => validateForWrite(TurnIndexSchema, value, 'turn index')).toThrow(
        `cannot write turn index: ${(runtime as { issues: string }).issues}`,
      )
    }
    const history = batches.find((batch) => batch.history)?.history
    const broken = { ...history, append: [{ role: 'nobody', content: 1 }] }
    const { runtime, compiled } = both(HistoryDeltaSchema, broken)
    expect(runtime).toHaveProperty('issues')
    expect(compiled).toEqual(runtime)
  })

  it('uses a schema zod does not compile (a reference cycle) as it is', () => {
    const state = z.record(z.string(), z.json())
    for (let use = 0; use <= USES_BEFORE_COMPILING; use++) expect(compiledSchema(state)).toBe(state)
    expect(compiledSchema(state).safeParse({ a: [1, { b: null }] })).toEqual(
      state.safeParse({ a: [1, { b: null }] }),
    )
  })
})

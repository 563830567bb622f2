import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  CONTEXT_RESET_MANIFEST_PATH,
  contextResetOrientation,
  decideContextReset,
  parseContextResetManifest,
  parseContextResetMode,
  renderContextResetManifest,
} from '../../src/core/compaction/context-reset-policy.ts'

const fixture = readFileSync(
  new URL('../fixtures/compaction/current_context_reset.md', import.meta.url),
  'utf8',
)

describe('context reset mode', () => {
  it('parses leniently: case, - or _, spaces; unknown is off', () => {
    expect(parseContextResetMode('on_stall')).toBe('on_stall')
    expect(parseContextResetMode('On-Stall')).toBe('on_stall')
    expect(parseContextResetMode(' ON_COMPACTION ')).toBe('on_compaction')
    expect(parseContextResetMode('on-compaction')).toBe('on_compaction')
    for (const value of ['off', 'OFF', 'always', 'onstall', '', 3, null, undefined]) {
      expect(parseContextResetMode(value)).toBe('off')
    }
  })

  it('resets after an auto-compaction, or at the stall threshold', () => {
    const base = { compacted: false, stallCount: 0, stallThreshold: 2 }
    expect(decideContextReset({ ...base, mode: 'off', compacted: true, stallCount: 9 })).toEqual({
      reset: false,
    })
    expect(decideContextReset({ ...base, mode: 'on_compaction', compacted: true })).toEqual({
      reset: true,
      trigger: 'compaction',
      stallCount: 0,
    })
    expect(decideContextReset({ ...base, mode: 'on_compaction', stallCount: 5 })).toEqual({
      reset: false,
    })
    expect(decideContextReset({ ...base, mode: 'on_stall', stallCount: 1 })).toEqual({
      reset: false,
    })
    expect(decideContextReset({ ...base, mode: 'on_stall', stallCount: 2 })).toEqual({
      reset: true,
      trigger: 'stall',
      stallCount: 2,
    })
    expect(
      decideContextReset({ ...base, mode: 'on_stall', stallCount: 2, stallThreshold: 0 }),
    ).toEqual({ reset: false })
  })
})

describe('context reset manifest', () => {
  it('is written exactly as the fixture and read back', () => {
    const manifest = { triggered_at: '2026-08-23T02:00:00+00:00', trigger: 'stall', stall_count: 3 }
    expect(renderContextResetManifest(manifest)).toBe(fixture)
    expect(parseContextResetManifest(fixture)).toEqual(manifest)
    expect(CONTEXT_RESET_MANIFEST_PATH).toBe('.vtcode/tasks/current_context_reset.md')
  })

  it('needs Triggered at and Trigger; a bad stall count is 0', () => {
    expect(parseContextResetManifest('')).toBeUndefined()
    expect(parseContextResetManifest('- **Trigger:** stall')).toBeUndefined()
    expect(
      parseContextResetManifest(
        '- **Triggered at:** t\n  - **Trigger:**   compaction  \n- **Stall count:** x',
      ),
    ).toEqual({
      triggered_at: 't',
      trigger: 'compaction',
      stall_count: 0,
    })
  })

  it('is shown under the Context Reset banner', () => {
    expect(contextResetOrientation(fixture)).toBe(
      '### Context Reset\nThis session starts from a clean context. Previous conversation history was ' +
        'deliberately discarded to clear noise and bad assumptions. Reorient from the artifacts below.\n\n' +
        fixture,
    )
  })
})

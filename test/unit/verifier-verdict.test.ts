import { describe, expect, it } from 'vitest'
import { parseVerdict, verifierTask } from '../../src/core/verifier/verifier-prompt.ts'

describe('verifier verdict (fail-closed)', () => {
  it('approves only an explicit approval without issues', () => {
    expect(
      parseVerdict(
        '## Verification Result\n\n**Decision:** APPROVE\n\n**Issues Found:** None\n\n**Reasoning:** fine.',
      ),
    ).toEqual({ approved: true, issues: [], reasoning: 'fine.' })
    const withIssue = parseVerdict(
      '**Decision:** APPROVE\n\n**Issues Found:**\n1. [info] a.ts: naming\n\n**Reasoning:** mostly fine.',
    )
    expect(withIssue).toMatchObject({ approved: false, issues: ['[info] a.ts: naming'] })
  })

  it('rejects a rejection, an ambiguous answer and no answer', () => {
    expect(
      parseVerdict('**Decision:** REJECT\n**Issues Found:**\n- broken\n**Reasoning:** no.'),
    ).toMatchObject({
      approved: false,
      issues: ['broken'],
    })
    expect(parseVerdict('**Decision:** REJECT')).toMatchObject({
      approved: false,
      issues: ['The verifier rejected the change.'],
    })
    expect(parseVerdict('Looks good to me.').approved).toBe(false)
    expect(parseVerdict(undefined)).toMatchObject({
      approved: false,
      issues: ['The verifier gave no answer.'],
    })
    expect(parseVerdict('Approved, but I rejected the tests.').approved).toBe(false)
  })

  it('asks to confirm deleted files are gone', () => {
    expect(
      verifierTask({ paths: ['a.ts', 'b.ts'], deleted: ['b.ts'], turnId: 'turn-2' }),
    ).toContain('- a.ts\n- b.ts (deleted: confirm it is gone)')
  })
})

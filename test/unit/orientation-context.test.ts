import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { writeArtifact } from '../../src/core/artifacts/artifact-service.ts'
import { ArtifactStore } from '../../src/core/artifacts/artifact-store.ts'
import { openSegment, segmentBoundaryReasons } from '../../src/core/compaction/segment-boundary.ts'
import { gatherOrientation } from '../../src/core/orientation/gather-orientation.ts'
import { renderOrientation } from '../../src/core/orientation/orientation-context.ts'
import { estimateTokens } from '../../src/core/session/fork-history.ts'

const NOW = Date.UTC(2026, 0, 1)

async function workspace() {
  const store = new ArtifactStore(new MemoryObjectStore(), 't/ws/.vtcode/')
  return store
}

async function fill(store: ArtifactStore, size = 1) {
  const ctx = { sessionId: 's0', now: NOW }
  const doc = (
    kind:
      | 'spec'
      | 'contract'
      | 'sprint_contract'
      | 'evaluation'
      | 'outcome_verification'
      | 'feature_list',
    line: string,
  ) =>
    writeArtifact(
      store,
      { kind, content: `# ${kind}\n\n${line}\n${'more text. '.repeat(size)}\n` },
      ctx,
    )
  await writeArtifact(
    store,
    {
      kind: 'progress',
      update: {
        goal: 'ship login',
        milestones: [
          { id: '1', description: 'form', status: 'done' },
          { id: '2', description: 'api', status: 'blocked' },
        ],
        known_issues: ['tokens expire early'],
      },
    },
    ctx,
  )
  await doc('spec', 'Spec line.')
  await doc('contract', 'Contract line.')
  await doc('sprint_contract', 'Sprint line.')
  await doc('evaluation', 'Verdict: fail.')
  await doc('outcome_verification', 'npm test passed.')
  await doc('feature_list', 'login, signup.')
  for (let i = 0; i < 10; i++)
    await store.append('notes', `note ${i} ${'n'.repeat(size)}`, NOW + i * 1000)
  await store.append('decisions', 'use JWT', NOW)
  await store.writeText('compaction_summary', `Earlier we built the form. ${'s'.repeat(size)}`)
  await store.writeText(
    'context_reset',
    '# Context Reset Manifest\n\n - **Triggered at:** 2026-01-01T00:00:00Z\n - **Trigger:** stall\n - **Stall count:** 2\n',
  )
  await writeArtifact(
    store,
    {
      kind: 'handoff',
      handoff: {
        target_agent: 'next',
        state_summary: 'Form done, API blocked.',
        task_context: 'Add login.',
        modified_files: ['src/form.ts'],
        open_decisions: [],
        context_files: [],
        boundary_status: [{ feature: 'form', status: 'done' }],
        known_issues: [],
        next_actions: ['Unblock the API'],
      },
    },
    ctx,
  )
}

describe('orientation context', () => {
  it('renders every artifact kind as a summary with a reference, in VT Code order', async () => {
    const store = await workspace()
    await fill(store)
    const warnings: string[] = []
    const gathered = await gatherOrientation({
      store,
      gitLog: async () => 'abc1234 add form\n',
      artifactTools: true,
      warnings,
    })
    const rendered = renderOrientation(gathered.context, { budget: 4000 })
    expect(warnings).toEqual([])
    expect(rendered.sections).toEqual([
      'Progress',
      'Spec',
      'Contract',
      'Sprint Contract',
      'Last Evaluation',
      'Outcome Verification',
      'Recent Git Log',
      'Loop Notes',
      'Loop Decisions',
      'Previous Session Summary',
      'Feature List',
      'Context Reset',
      'Handoff',
    ])
    const text = rendered.text
    expect(
      text.startsWith(
        '[Orientation Context]\n\n### Progress\nGoal: ship login | Completion: 50% | Confidence: 1.00 | on track\n- [BLOCKED] 2 — api\n- Known issue: tokens expire early\nFull text: .vtcode/state/progress.json (read_artifact {"kind":"progress"})',
      ),
    ).toBe(true)
    expect(text).toContain(
      '### Spec\nSpec: Spec line. | more text.\nFull text: .vtcode/tasks/current_spec.md',
    )
    expect(text).toContain('### Recent Git Log\nabc1234 add form')
    expect(text).toContain('### Loop Notes\n- [2026-01-01T00:00:02Z] note 2')
    expect(text).not.toContain('] note 1 ')
    expect(text).toContain('(2 earlier entries)')
    expect(text).toContain('### Context Reset\nThis session starts from a clean context.')
    expect(text).toContain(' - **Trigger:** stall')
    expect(text).toMatch(
      /\n\n## HANDOFF FROM PREVIOUS AGENT\n\n[\s\S]*### Modified Files\nsrc\/form\.ts/,
    )
    expect(gathered.workspaceManifest?.text).toContain('Stall count')
  })

  it('leaves absent artifacts out, and is empty when there is nothing', async () => {
    const store = await workspace()
    const empty = await gatherOrientation({ store, artifactTools: false, warnings: [] })
    expect(renderOrientation(empty.context, { budget: 2000 })).toEqual({
      text: '',
      tokens: 0,
      sections: [],
      trimmed: [],
    })
    await store.append('decisions', 'only this', NOW)
    const one = await gatherOrientation({ store, artifactTools: false, warnings: [] })
    const rendered = renderOrientation(one.context, { budget: 2000 })
    expect(rendered.sections).toEqual(['Loop Decisions'])
    expect(rendered.text).toBe(
      '[Orientation Context]\n\n### Loop Decisions\n- [2026-01-01T00:00:00Z] only this\nFull text: .vtcode/state/decisions.md',
    )
  })

  it('stays within its token budget by cutting the least important sections to references', async () => {
    const store = await workspace()
    await fill(store, 400)
    const gathered = await gatherOrientation({ store, artifactTools: true, warnings: [] })
    const full = renderOrientation(gathered.context, { budget: 100_000 })
    expect(full.trimmed).toEqual([])
    for (const budget of [1500, 700, 300]) {
      const rendered = renderOrientation(gathered.context, {
        budget,
        reference: (field) => `see ${field}`,
      })
      expect(rendered.tokens).toBeLessThanOrEqual(budget)
      expect(rendered.tokens).toBe(estimateTokens(rendered.text))
      expect(rendered.trimmed.length).toBeGreaterThan(0)
      expect(rendered.trimmed[0]).toBe('Feature List')
      expect(rendered.text).toContain('see feature_list_summary')
    }
    // The reset banner is the last to go.
    expect(renderOrientation(gathered.context, { budget: 700 }).text).toContain('### Context Reset')
  })

  it('puts its digest into the prefix hash: another orientation is another segment', async () => {
    const basis = (orientation: string, digest?: string) => ({
      systemPrompt: ['Be brief.', orientation].filter(Boolean).join('\n\n'),
      instructions: 'Be brief.',
      orientationDigest: digest,
      tools: [],
      model: 'm',
      provider: 'p',
      mode: 'auto',
    })
    const plain = await openSegment(1, basis(''))
    const oriented = await openSegment(
      1,
      basis('[Orientation Context]\n\n### Spec\nSpec: a', 'aaaaaaaaaaaaaaaa'),
    )
    const other = await openSegment(
      1,
      basis('[Orientation Context]\n\n### Spec\nSpec: b', 'bbbbbbbbbbbbbbbb'),
    )
    expect(plain.orientation_digest).toBeUndefined()
    expect(oriented.orientation_digest).toBe('aaaaaaaaaaaaaaaa')
    expect(new Set([plain.prefix_hash, oriented.prefix_hash, other.prefix_hash]).size).toBe(3)
    expect(oriented.instruction_digest).toBe(plain.instruction_digest)
    expect(segmentBoundaryReasons({ current: oriented, next: other })).toEqual(['orientation'])
  })
})

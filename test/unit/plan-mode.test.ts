import { describe, expect, it } from 'vitest'
import { PLAN_APPROVAL_DECISIONS } from '../../src/contract/enums.ts'
import type { PendingPlanApproval } from '../../src/contract/plan-approval.ts'
import { PlanApprovalRequestSchema } from '../../src/contract/plan-approval.ts'
import { type ThreadEvent, ThreadEventSchema } from '../../src/contract/thread-event.ts'
import {
  applyFreshContext,
  CLEARED_ON_FRESH_CONTEXT,
  contextResetEvent,
  contextUsagePercent,
  type FreshContextState,
  PRESERVED_ON_FRESH_CONTEXT,
} from '../../src/core/plan/fresh-context.ts'
import {
  freshContextDirective,
  originalTask,
  planBoundary,
  renderHandoffPrompt,
} from '../../src/core/plan/handoff-prompt.ts'
import { resolvePlanApproval } from '../../src/core/plan/plan-decision.ts'
import { planReadyEvents } from '../../src/core/plan/plan-events.ts'
import { extractProposedPlan, ProposedPlanStream } from '../../src/core/plan/proposed-plan.ts'

const PLAN = '# Add retries\n\n## Steps\n1. Wrap the call -> src/a.ts\n2. Test it -> npm test'
const OUTPUT = `Repository facts checked:\n- src/a.ts\n\n<proposed_plan>\n${PLAN}\n</proposed_plan>\nReady.`

describe('proposed plan parsing', () => {
  it('extracts the block and the text around it', () => {
    expect(extractProposedPlan(OUTPUT)).toEqual({
      text: PLAN,
      complete: true,
      remainder: 'Repository facts checked:\n- src/a.ts\n\n\nReady.',
    })
    expect(extractProposedPlan('no plan here')).toBeUndefined()
  })

  it('marks a block cut at the output limit as incomplete', () => {
    expect(extractProposedPlan('x <proposed_plan>\n1. a\n2. b')).toEqual({
      text: '1. a\n2. b',
      complete: false,
      remainder: 'x',
    })
  })

  it('takes the last closed block when the model revised its plan', () => {
    const text = '<proposed_plan>old</proposed_plan> better: <proposed_plan>new</proposed_plan>'
    expect(extractProposedPlan(text)?.text).toBe('new')
  })

  it('streams the same plan whatever the chunking, tags split anywhere', () => {
    const collect = (chunks: string[]) => {
      const stream = new ProposedPlanStream()
      const segments = [...chunks.flatMap((c) => stream.push(c)), ...stream.finish()]
      return {
        kinds: segments.map((s) => s.kind).filter((k) => k !== 'text' && k !== 'plan_delta'),
        plan: segments.map((s) => (s.kind === 'plan_delta' ? s.text : '')).join(''),
        text: segments.map((s) => (s.kind === 'text' ? s.text : '')).join(''),
      }
    }
    const whole = collect([OUTPUT])
    expect(whole.kinds).toEqual(['plan_start', 'plan_end'])
    expect(whole.plan.trim()).toBe(PLAN)
    expect(whole.text).toBe('Repository facts checked:\n- src/a.ts\n\n\nReady.')
    for (let cut = 0; cut <= OUTPUT.length; cut++) {
      expect(collect([OUTPUT.slice(0, cut), OUTPUT.slice(cut)])).toEqual(whole)
    }
    expect(collect([...OUTPUT])).toEqual(whole)
  })

  it('never holds back text that cannot start a tag', () => {
    const stream = new ProposedPlanStream()
    expect(stream.push('hello <prop')).toEqual([{ kind: 'text', text: 'hello ' }])
    expect(stream.push('osal>')).toEqual([{ kind: 'text', text: '<proposal>' }])
    expect(stream.push('<proposed_plan>1.')).toEqual([
      { kind: 'plan_start' },
      { kind: 'plan_delta', text: '1.' },
    ])
    expect(stream.planOpen).toBe(true)
  })
})

const ctx = { threadId: 'thread-1', turnId: 'turn-2', harnessItemId: counter('harness-') }
function counter(prefix: string) {
  let n = 0
  return () => `${prefix}${n++}`
}

describe('plan events', () => {
  it('emits VT Code’s plan-ready sequence, valid on the wire', () => {
    const events = planReadyEvents({ ...ctx, harnessItemId: counter('harness-') }, PLAN)
    for (const event of events) expect(ThreadEventSchema.parse(event)).toEqual(event)
    expect(events).toEqual([
      {
        type: 'item.completed',
        item: {
          id: 'harness-0',
          type: 'harness',
          event: 'planning_started',
          message: 'Planning workflow produced a plan for review.',
        },
      },
      { type: 'item.started', item: { id: 'turn-2-plan', type: 'plan', text: '' } },
      {
        type: 'plan.delta',
        thread_id: 'thread-1',
        turn_id: 'turn-2',
        item_id: 'turn-2-plan',
        delta: PLAN,
      },
      { type: 'item.completed', item: { id: 'turn-2-plan', type: 'plan', text: PLAN } },
      {
        type: 'item.completed',
        item: {
          id: 'harness-1',
          type: 'harness',
          event: 'planning_completed',
          message: 'Plan is ready for user approval.',
        },
      },
      { type: 'plan.approval.requested', thread_id: 'thread-1', turn_id: 'turn-2' },
    ])
  })

  it('carries streamed deltas and the plan file', () => {
    const events = planReadyEvents({ ...ctx, planFile: '.vtcode/plans/turn-2.md' }, 'ab', [
      'a',
      '',
      'b',
    ])
    const deltas = events.filter((e) => e.type === 'plan.delta')
    expect(deltas.map((e) => e.delta)).toEqual(['a', 'b'])
    expect(events.at(-1)).toEqual({
      type: 'plan.approval.requested',
      thread_id: 'thread-1',
      turn_id: 'turn-2',
      plan_file: '.vtcode/plans/turn-2.md',
    })
    const harness = events.filter(
      (e): e is Extract<ThreadEvent, { type: 'item.completed' }> =>
        e.type === 'item.completed' && e.item.type === 'harness',
    )
    expect(harness.map((e) => 'path' in e.item && e.item.path)).toEqual([
      '.vtcode/plans/turn-2.md',
      '.vtcode/plans/turn-2.md',
    ])
  })
})

const pending: PendingPlanApproval = {
  turn_id: 'turn-2',
  plan: PLAN,
  task: 'Make the client retry.',
  requested_at: 0,
}
const approval = {
  threadId: 'thread-1',
  contextTokens: 11_200,
  maxContextTokens: 160_000,
}

describe('plan approval decisions', () => {
  it('records every decision as plan.approval.resolved of the planning turn', () => {
    for (const decision of PLAN_APPROVAL_DECISIONS) {
      const { event } = resolvePlanApproval(pending, { decision }, approval)
      expect(ThreadEventSchema.parse(event)).toEqual(event)
      expect(event).toEqual({
        type: 'plan.approval.resolved',
        thread_id: 'thread-1',
        turn_id: 'turn-2',
        decision,
        automatic: false,
      })
    }
    const automatic = resolvePlanApproval(
      pending,
      { decision: 'execute' },
      {
        ...approval,
        automatic: true,
      },
    )
    expect(automatic.event.automatic).toBe(true)
  })

  it('maps each decision to agent, permissions mode and context', () => {
    const outcome = (decision: (typeof PLAN_APPROVAL_DECISIONS)[number], resume?: 'auto') =>
      resolvePlanApproval(pending, { decision }, { ...approval, resumeMode: resume }).outcome
    expect(outcome('execute')).toMatchObject({
      kind: 'execute',
      targetAgent: 'build',
      permissionMode: 'default',
      freshContext: false,
      plan: PLAN,
    })
    expect(outcome('execute', 'auto')).toMatchObject({ permissionMode: 'auto' })
    expect(outcome('auto_accept')).toMatchObject({ targetAgent: 'build', permissionMode: 'auto' })
    expect(outcome('switch_build', 'auto')).toMatchObject({
      targetAgent: 'build',
      permissionMode: 'default',
      freshContext: false,
    })
    expect(outcome('switch_auto')).toMatchObject({ targetAgent: 'auto', permissionMode: 'auto' })
    expect(outcome('fresh_context')).toMatchObject({
      kind: 'execute',
      targetAgent: 'build',
      permissionMode: 'default',
      freshContext: true,
    })
    expect(outcome('revise')).toEqual({ kind: 'revise', permissionMode: 'plan' })
    expect(outcome('cancel')).toEqual({ kind: 'cancel', permissionMode: 'plan' })
    const execute = outcome('execute')
    if (execute.kind !== 'execute') throw new Error('expected execute')
    expect(execute.message.role).toBe('user')
    expect(execute.message.content).toContain('Implement the approved plan')
  })

  it('passes revise feedback to the model', () => {
    const { outcome } = resolvePlanApproval(
      pending,
      { decision: 'revise', feedback: 'Use exponential backoff.' },
      approval,
    )
    expect(outcome).toMatchObject({ kind: 'revise', message: { role: 'user' } })
    if (outcome.kind !== 'revise') throw new Error('expected revise')
    expect(outcome.message?.content).toContain('Use exponential backoff.')
  })

  it('resets the context for fresh_context with VT Code’s fields', () => {
    const resolved = resolvePlanApproval(pending, { decision: 'fresh_context' }, approval)
    expect(resolved.reset).toEqual({
      type: 'context.reset',
      thread_id: 'thread-1',
      turn_id: 'turn-2',
      trigger: 'plan_approval',
      plan_preserved: true,
      previous_context_usage_percent: 7,
      tool_budget_reset: true,
    })
    expect(ThreadEventSchema.parse(resolved.reset)).toEqual(resolved.reset)
    for (const decision of PLAN_APPROVAL_DECISIONS.filter((d) => d !== 'fresh_context')) {
      expect(resolvePlanApproval(pending, { decision }, approval).reset).toBeUndefined()
    }
    if (resolved.outcome.kind !== 'execute') throw new Error('expected execute')
    const directive = resolved.outcome.message.content
    expect(directive.startsWith('## HANDOFF FROM PREVIOUS AGENT\n\n')).toBe(true)
    expect(directive).toContain('### Current State\n')
    expect(directive).toContain('### Boundary Status\n- [NOT STARTED] Wrap the call -> src/a.ts')
    expect(directive).toContain('### Task Context\nMake the client retry.\n\nApproved plan:\n\n')
    expect(directive).toContain(PLAN)
  })

  it('clamps the context usage percent to 0–100', () => {
    expect(contextUsagePercent(11_200, 160_000)).toBe(7)
    expect(contextUsagePercent(159_999, 160_000)).toBe(99)
    expect(contextUsagePercent(160_000, 160_000)).toBe(100)
    expect(contextUsagePercent(500_000, 160_000)).toBe(100)
    expect(contextUsagePercent(-5, 160_000)).toBe(0)
    expect(contextUsagePercent(10, 0)).toBe(0)
    const event = contextResetEvent({ ...approval, turnId: 'turn-2', contextTokens: 1e9 })
    expect(event.previous_context_usage_percent).toBe(100)
  })

  it('refuses a decision when no plan waits, and unknown decisions at the boundary', () => {
    expect(() => resolvePlanApproval(undefined, { decision: 'execute' }, approval)).toThrow(
      /no plan is waiting/,
    )
    const parse = (body: unknown) => PlanApprovalRequestSchema.safeParse(body).success
    expect(parse({ decision: 'fresh_context' })).toBe(true)
    expect(parse({ decision: 'future_decision' })).toBe(false)
    expect(parse({ decision: 'revise', feedback: 'shorter' })).toBe(true)
    expect(parse({ decision: 'execute', feedback: 'shorter' })).toBe(false)
  })
})

describe('handoff prompt', () => {
  it('renders every section in VT Code’s order and words', () => {
    const prompt = renderHandoffPrompt({
      target_agent: 'verifier',
      state_summary: 'All features implemented',
      modified_files: ['src/main.rs', 'src/lib.rs'],
      open_decisions: ['Use JWT?'],
      task_context: 'Review the implementation',
      test_results: '12 passed, 0 failed',
      boundary_status: [
        { feature: 'login', status: 'done', notes: 'JWT auth working' },
        { feature: 'signup', status: 'in_progress' },
        { feature: 'reset', status: 'blocked' },
      ],
      known_issues: ['Rate limiting not implemented'],
      next_actions: ['Add rate limiting', 'Write integration tests'],
    })
    expect(prompt).toBe(
      [
        '## HANDOFF FROM PREVIOUS AGENT',
        '',
        'Previous agent completed work and is handing off to you.',
        '',
        '### Current State\nAll features implemented',
        '### Boundary Status\n- [DONE] login -- JWT auth working\n- [IN PROGRESS] signup\n- [BLOCKED] reset',
        '### Modified Files\nsrc/main.rs\nsrc/lib.rs',
        '### Test Results\n12 passed, 0 failed',
        '### Open Decisions\nUse JWT?',
        '### Known Issues\n- Rate limiting not implemented',
        '### Recommended Next Actions\n1. Add rate limiting\n1. Write integration tests',
        '### Task Context\nReview the implementation\n\nContinue from where the previous agent left ' +
          'off. Read the modified files to understand the current state. Check boundary status ' +
          "to know what's done vs. what needs work.",
      ].join('\n\n'),
    )
  })

  it('omits empty sections', () => {
    const prompt = renderHandoffPrompt({ target_agent: 'a', state_summary: 's', task_context: 't' })
    for (const section of ['Boundary', 'Modified', 'Test Results', 'Open', 'Known', 'Next']) {
      expect(prompt).not.toContain(`### ${section}`)
    }
    expect(prompt).toContain('### Current State\ns')
    expect(prompt).toContain('### Task Context\nt\n\n')
  })

  it('reads plan steps and checklists as boundary items, and the task from the transcript', () => {
    expect(planBoundary('intro\n1. one\n2) two\n- [x] done item\n- [ ] open item')).toEqual([
      { feature: 'one', status: 'not_started' },
      { feature: 'two', status: 'not_started' },
      { feature: 'done item', status: 'done' },
      { feature: 'open item', status: 'not_started' },
    ])
    expect(
      originalTask([
        { role: 'system', content: 's' },
        { role: 'user', content: 'steer', intent_id: 'i1' },
        { role: 'user', content: 'the task' },
      ]),
    ).toBe('the task')
    expect(freshContextDirective({ plan: 'p', targetAgent: 'auto' }).content).toContain(
      'Implement the approved plan below.',
    )
  })
})

describe('fresh context state', () => {
  const state: FreshContextState & { engine_only: string } = {
    plan: PLAN,
    task_tracker: '- [ ] step',
    config: { permissions: { mode: 'plan' } },
    usage: { input_tokens: 9 },
    cost_usd: 0.5,
    model_requests: 4,
    applied_intents: ['a'],
    item_counter: 12,
    turn_counter: 3,
    history: [{ role: 'user', content: 'plan it' }],
    tool_loops: 7,
    continuation: 'retry',
    recovery_attempts: 1,
    response_chain: 'resp_1',
    segment_id: 'segment-00000002',
    prefix_hash: 'aa',
    catalog_hash: 'bb',
    compaction_pending: true,
    engine_only: 'kept',
  }

  it('keeps plan, tracker, config, usage and counters; clears transcript and transient state', () => {
    const directive = { role: 'user' as const, content: '## HANDOFF FROM PREVIOUS AGENT' }
    const after = applyFreshContext(state, directive)
    for (const key of PRESERVED_ON_FRESH_CONTEXT) expect(after[key]).toEqual(state[key])
    expect(after.engine_only).toBe('kept')
    expect(after).toMatchObject({
      history: [directive],
      tool_loops: 0,
      continuation: null,
      recovery_attempts: 0,
      response_chain: null,
      segment_id: null,
      prefix_hash: null,
      catalog_hash: null,
      compaction_pending: false,
    })
    for (const key of CLEARED_ON_FRESH_CONTEXT) expect(after[key]).not.toEqual(state[key])
    expect(state.history).toHaveLength(1)
    const both = PRESERVED_ON_FRESH_CONTEXT.filter((k) =>
      (CLEARED_ON_FRESH_CONTEXT as readonly string[]).includes(k),
    )
    expect(both).toEqual([])
    expect(PRESERVED_ON_FRESH_CONTEXT.length + CLEARED_ON_FRESH_CONTEXT.length).toBe(
      Object.keys(state).length - 1,
    )
  })
})

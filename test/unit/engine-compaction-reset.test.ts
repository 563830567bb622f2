import { describe, expect, it } from 'vitest'
import { parseContextResetManifest } from '../../src/core/compaction/context-reset-policy.ts'
import {
  assertNoOrphansInRequests,
  boundaries,
  committed,
  isSummaryRequest,
  requestTranscript,
  scriptAgent,
} from '../support/compaction-engine.ts'
import { echoTool } from '../support/engine-deps.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'
import type { ScriptedStep } from '../support/scripted-model.ts'

/**
 * `context_reset_mode`: a reset writes the Context Reset Manifest to the workspace's
 * `.vtcode/tasks/current_context_reset.md` and the next turn starts from orientation only (every
 * surviving artifact, the reset banner, the manifest and the last compaction summary, in the
 * system prompt) plus its own input; the manifest is consumed. No event is emitted for it.
 */
const fixture = useScriptedEngine()

const BAD: ScriptedStep = {
  fail: {
    kind: 'bad_request',
    status: 400,
    code: 'invalid_prompt',
    message: 'the prompt was refused',
  },
}
const lastAgentRequest = () => {
  const agent = fixture.engine.model.requests.filter((r) => !isSummaryRequest(r))
  return requestTranscript(agent.at(-1) as (typeof agent)[0])
}
const manifestKey = (workspace: string) => `t1/${workspace}/.vtcode/tasks/current_context_reset.md`

async function manifestText(workspace: string): Promise<string | undefined> {
  const stored = await fixture.engine.store.get(manifestKey(workspace))
  return stored ? new TextDecoder().decode(stored.body) : undefined
}

describe('context reset', () => {
  it('on_compaction: the turn after an automatic compaction starts from orientation only', async () => {
    const { service, model, receiver, deps } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', {
      workspace: 'reset-compaction',
      instructions: 'Be brief.',
      tools: [echoTool(receiver.url)],
      harness: {
        max_context_tokens: 2000,
        context_reset_mode: 'on_compaction',
        artifact_tools: false,
      },
    })
    // A durable artifact that survives the reset.
    await service.appendArtifact('t1', 'reset-compaction', 'decisions', 'keep the lookup tool')
    const call = (n: number, tokens: number): ScriptedStep => ({
      toolCalls: [{ id: `call_${n}`, name: 'lookup', arguments: `{"q":"item ${n}"}` }],
      usage: { input_tokens: tokens, output_tokens: 10 },
    })
    const script = scriptAgent(model, [
      call(1, 300),
      { text: 'a1', usage: { input_tokens: 400, output_tokens: 5 } },
      call(2, 500),
      { text: 'a2', usage: { input_tokens: 600, output_tokens: 5 } },
      call(3, 700),
      { text: 'a3', usage: { input_tokens: 1950, output_tokens: 5 } },
      { text: 'a4' },
      { text: 'a5' },
    ])
    for (let n = 1; n <= 3; n++) await service.stepTurn('t1', sid, { input: `task ${n}` })
    expect(await manifestText('reset-compaction')).toBeUndefined()

    const compacting = await service.stepTurn('t1', sid, { input: 'task 4' })
    expect(boundaries(compacting.events).map((b) => b.trigger)).toEqual(['auto'])
    const manifest = parseContextResetManifest((await manifestText('reset-compaction')) ?? '')
    expect(manifest).toMatchObject({ trigger: 'compaction', stall_count: 0 })
    expect(manifest?.triggered_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    // The compaction left its summary as a workspace artifact for later orient phases.
    const summary = await service.getArtifact('t1', 'reset-compaction', 'compaction_summary')
    expect(summary).toMatchObject({
      path: '.vtcode/memories/compaction_summary.md',
      content: expect.stringMatching(/^Summary 1:/),
    })
    const marked = await committed(deps, 't1', sid, 'reset-compaction')
    expect(marked.state.compaction?.reset_manifest).toBe(manifestKey('reset-compaction'))
    const segment = marked.state.compaction?.segment?.sequence ?? 0

    const fresh = await service.stepTurn('t1', sid, { input: 'task 5' })
    expect(fresh.status).toBe('completed')
    expect(fresh.events.map((e) => e.type)).not.toContain('thread.compact_boundary')
    expect(fresh.events.map((e) => e.type)).not.toContain('context.reset')
    const sent = lastAgentRequest()
    expect(sent).toHaveLength(2)
    expect(sent[1]).toEqual({ role: 'user', content: 'task 5' })
    const orientation = sent[0]?.content ?? ''
    expect(orientation).toMatch(
      /^Be brief\.\n\n\[Orientation Context\]\n\n### Loop Decisions\n- \[.+\] keep the lookup tool\nFull text: \.vtcode\/state\/decisions\.md\n\n### Previous Session Summary\nSummary 1:/,
    )
    expect(orientation).toContain('### Context Reset\nThis session starts from a clean context.')
    expect(orientation).toContain('# Context Reset Manifest')
    expect(orientation).toContain(' - **Trigger:** compaction')
    // Consumed: the manifest is gone, the state clear, the segment the next one.
    expect(await manifestText('reset-compaction')).toBeUndefined()
    const after = await committed(deps, 't1', sid, 'reset-compaction')
    expect(after.state.compaction?.reset_manifest).toBeUndefined()
    expect(after.state.compaction?.segment?.sequence).toBe(segment + 1)
    expect(after.history.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(after.state.agent?.orientation).toMatchObject({
      reason: 'context_reset',
      sections: ['Loop Decisions', 'Previous Session Summary', 'Context Reset'],
    })
    assertNoOrphansInRequests(model.requests)
    expect(script.unexpected).toEqual([])
  })

  it('on_stall: consecutive failed turns reach the threshold, a completed turn starts over', async () => {
    const { service, model, deps } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', {
      harness: { context_reset_mode: 'on_stall', context_reset_stall_threshold: 2 },
    })
    const script = scriptAgent(model, [{ text: 'ok' }, BAD, { text: 'ok again' }, BAD])
    await service.stepTurn('t1', sid, { input: 'one' })
    expect((await service.stepTurn('t1', sid, { input: 'two' })).status).toBe('failed')
    await service.stepTurn('t1', sid, { input: 'three' })
    expect((await service.stepTurn('t1', sid, { input: 'four' })).status).toBe('failed')
    expect(await manifestText('default')).toBeUndefined()
    expect((await committed(deps, 't1', sid)).state.compaction?.stall_count).toBe(1)

    script.push(BAD)
    expect((await service.stepTurn('t1', sid, { input: 'five' })).status).toBe('failed')
    expect(parseContextResetManifest((await manifestText('default')) ?? '')).toMatchObject({
      trigger: 'stall',
      stall_count: 2,
    })

    script.push({ text: 'reoriented' })
    const fresh = await service.stepTurn('t1', sid, { input: 'six' })
    expect(fresh.status).toBe('completed')
    const sent = lastAgentRequest()
    expect(sent.map((m) => m.role)).toEqual(['system', 'user'])
    expect(sent[0]?.content).toMatch(/^\[Orientation Context\]\n\n### Context Reset\n/)
    expect(sent[0]?.content).toContain(' - **Stall count:** 2')
    expect(sent[1]).toEqual({ role: 'user', content: 'six' })
    expect(await manifestText('default')).toBeUndefined()
    expect((await committed(deps, 't1', sid)).state.compaction?.stall_count).toBeUndefined()
    expect(script.unexpected).toEqual([])
  })

  it('is off by default: failed turns write no manifest', async () => {
    const { service, model } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', {})
    scriptAgent(model, [BAD, BAD, BAD])
    for (const input of ['a', 'b', 'c']) await service.stepTurn('t1', sid, { input })
    expect(await manifestText('default')).toBeUndefined()
    const { state } = await committed(fixture.engine.deps, 't1', sid)
    expect(state.compaction?.stall_count).toBeUndefined()
    expect(state.compaction?.reset_manifest).toBeUndefined()
  })
})

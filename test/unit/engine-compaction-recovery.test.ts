import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { isMemoryEnvelopeMessage } from '../../src/core/compaction/render-envelope.ts'
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
 * Recovery compaction: the provider rejects the follow-up request after successful tool output.
 * The older prefix is compacted once — even with auto-compaction off — keeping the current
 * request and its tool results verbatim, one `recovery` boundary is emitted and the request is
 * retried once; a second failure ends the turn blocked (never success) and resumable.
 */
const fixture = useScriptedEngine()

const OVERFLOW: ScriptedStep = {
  fail: {
    kind: 'context_overflow',
    status: 400,
    code: 'context_length_exceeded',
    message: "This model's maximum context length is 128000 tokens.",
  },
}
const lookup = (id: string): ScriptedStep => ({
  toolCalls: [{ id, name: 'lookup', arguments: '{"q":"the failing test"}' }],
})
const types = (events: ThreadEvent[]) =>
  events.map((e) => ('item' in e ? `${e.type}:${e.item.type}` : e.type))

/** A session with two earlier turns (a prefix worth compacting), auto-compaction off. */
async function sessionWithPrefix(turns = 2) {
  const { service, model, receiver } = fixture.engine
  const { session_id } = await service.createSession('t1', {
    instructions: 'Be brief.',
    tools: [echoTool(receiver.url)],
    harness: { auto_compaction_enabled: false },
  })
  const questions = ['first question', 'second question', 'third question'].slice(0, turns)
  const script = scriptAgent(
    model,
    questions.map((_, i) => ({ text: `a${i + 1}` })),
  )
  for (const input of questions) await service.stepTurn('t1', session_id, { input })
  return { sid: session_id, script }
}

describe('recovery compaction', () => {
  it('compacts the older prefix once after a context overflow, then the retry succeeds', async () => {
    const { service, model, receiver, deps } = fixture.engine
    const { sid, script } = await sessionWithPrefix(3)
    script.push(lookup('call_r1'), OVERFLOW, { text: 'fixed it' })
    const turn = await service.stepTurn('t1', sid, { input: 'fix the failing test' })

    expect(turn.status).toBe('completed')
    expect(types(turn.events)).toEqual([
      'turn.started',
      'item.started:tool_invocation',
      'item.updated:tool_invocation',
      'item.completed:tool_invocation',
      'item.started:tool_output',
      'item.completed:tool_output',
      'thread.compact_boundary',
      'item.started:agent_message',
      'item.completed:agent_message',
      'turn.completed',
    ])
    const [boundary] = boundaries(turn.events)
    expect(boundary).toMatchObject({
      trigger: 'recovery',
      mode: 'local',
      original_message_count: 9,
      previous_segment_id: 'segment-00000001',
      new_segment_id: 'segment-00000002',
    })
    expect(receiver.calls).toHaveLength(1)
    expect(script.summaries).toBe(1)

    // The failed request and the retry end with the same current request and tool result.
    const agent = model.requests.filter((r) => !isSummaryRequest(r))
    const failed = requestTranscript(agent.at(-2) as (typeof agent)[0])
    const retry = requestTranscript(agent.at(-1) as (typeof agent)[0])
    expect(retry.slice(-3)).toEqual(failed.slice(-3))
    expect(retry.slice(-3).map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    expect(retry[0]).toEqual({ role: 'system', content: 'Be brief.' })
    expect(isMemoryEnvelopeMessage(retry[1] as (typeof retry)[0])).toBe(true)
    expect(retry[2]?.content).toMatch(/^Previous conversation summary:\n/)
    // The prefix is summarized with its user messages retained; the answers are gone.
    expect(retry.slice(3, -3)).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'user', content: 'second question' },
      { role: 'user', content: 'third question' },
    ])
    expect(retry.length).toBe(failed.length - 1)
    expect(boundary?.compacted_message_count).toBe(retry.length - 1)
    assertNoOrphansInRequests(model.requests)

    const after = await committed(deps, 't1', sid)
    expect(after.state.compaction?.blocked).toBeUndefined()
    // The anchor describes the retried (compacted) request, not the rejected one.
    expect(after.state.compaction?.usage_anchor?.message_count).toBe(retry.length - 1)
    expect(after.history.at(-1)).toEqual({ role: 'assistant', content: 'fixed it' })
    expect(script.unexpected).toEqual([])
  })

  it('ends the turn blocked when the retry fails too, and a turn without input resumes it', async () => {
    const { service, model, receiver, deps } = fixture.engine
    const { sid, script } = await sessionWithPrefix()
    script.push(lookup('call_b1'), OVERFLOW, OVERFLOW)
    const turn = await service.stepTurn('t1', sid, { input: 'fix the failing test' })

    expect(turn.status).toBe('failed')
    expect(boundaries(turn.events).map((b) => b.trigger)).toEqual(['recovery'])
    expect(turn.events.some((e) => e.type === 'turn.completed')).toBe(false)
    const failed = turn.events.at(-1)
    expect(failed).toMatchObject({ type: 'turn.failed' })
    expect((failed as { message: string }).message).toMatch(/^blocked: .*context_overflow/)
    expect(script.summaries).toBe(1)
    const blocked = await committed(deps, 't1', sid)
    expect(blocked.state.compaction?.blocked).toBe(true)
    expect(blocked.state.open_turn).toBeNull()
    expect(blocked.history.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_b1' })

    // Resumed: the same transcript is sent again, the tool does not run again.
    script.push({ text: 'done after all' })
    const resumed = await service.stepTurn('t1', sid, {})
    expect(resumed.status).toBe('completed')
    expect(resumed.turn_id).not.toBe(turn.turn_id)
    const agent = model.requests.filter((r) => !isSummaryRequest(r))
    expect(requestTranscript(agent.at(-1) as (typeof agent)[0])).toEqual(
      requestTranscript(agent.at(-2) as (typeof agent)[0]),
    )
    expect(receiver.calls).toHaveLength(1)
    expect((await committed(deps, 't1', sid)).state.compaction?.blocked).toBeUndefined()
    // Without a blocked turn, a turn needs input again.
    await expect(service.stepTurn('t1', sid, {})).rejects.toMatchObject({ code: 'invalid_input' })
    assertNoOrphansInRequests(model.requests)
    expect(script.unexpected).toEqual([])
  })

  it('recovers from a server error after tool output, but not from one before any tool ran', async () => {
    const { service, model } = fixture.engine
    const { sid, script } = await sessionWithPrefix()
    script.push(
      lookup('call_s1'),
      { fail: { kind: 'server', status: 500, message: 'upstream hiccup' } },
      { text: 'ok' },
    )
    const turn = await service.stepTurn('t1', sid, { input: 'run the check' })
    expect(turn.status).toBe('completed')
    expect(boundaries(turn.events).map((b) => b.trigger)).toEqual(['recovery'])

    // The first request of a turn failing with a server error is an ordinary failure.
    script.push({ fail: { kind: 'server', status: 500, message: 'upstream hiccup' } })
    const plain = await service.stepTurn('t1', sid, { input: 'again' })
    expect(plain.status).toBe('failed')
    expect(boundaries(plain.events)).toEqual([])
    expect(plain.events.at(-1)).toMatchObject({ type: 'turn.failed' })
    expect((plain.events.at(-1) as { message: string }).message).not.toMatch(/^blocked/)
    expect(script.summaries).toBe(1)
    assertNoOrphansInRequests(model.requests)
  })

  it('blocks at once when there is no older prefix to compact', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
    })
    const script = scriptAgent(model, [lookup('call_f1'), OVERFLOW])
    const turn = await service.stepTurn('t1', session_id, { input: 'huge first request' })
    expect(turn.status).toBe('failed')
    expect(boundaries(turn.events)).toEqual([])
    expect((turn.events.at(-1) as { message: string }).message).toMatch(/^blocked: /)
    expect(script.summaries).toBe(0)
  })
})

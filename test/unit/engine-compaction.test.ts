import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { parseMemoryEnvelope } from '../../src/contract/memory-envelope.ts'
import { loadTokenizer } from '../../src/core/compaction/bpe-tokenizer.ts'
import { isMemoryEnvelopeMessage } from '../../src/core/compaction/render-envelope.ts'
import { TokenCounter } from '../../src/core/compaction/token-counter.ts'
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
 * Automatic compaction in the engine, with a 2,000-token context (hard 1,800, soft 1,620): the
 * provider's reported usage drives the decisions, the real tokenizer settles them near the
 * thresholds, and every request the model model received keeps the tool-call protocol.
 */
const fixture = useScriptedEngine()

const Q = 'alpha beta gamma delta epsilon '.repeat(16).trim()

/** One turn's two agent replies: a lookup call, then the answer; usage as the provider says. */
function toolTurn(n: number, callTokens: number, answerTokens: number): ScriptedStep[] {
  return [
    {
      toolCalls: [
        { id: `call_${n}`, name: 'lookup', arguments: JSON.stringify({ q: `${n} ${Q}` }) },
      ],
      usage: { input_tokens: callTokens, output_tokens: 20 },
    },
    { text: `answer ${n}`, usage: { input_tokens: answerTokens, output_tokens: 5 } },
  ]
}

async function newSession(harness: Record<string, unknown> = { max_context_tokens: 2000 }) {
  const { session_id } = await fixture.engine.service.createSession('t1', {
    instructions: 'Be brief.',
    tools: [echoTool(fixture.engine.receiver.url)],
    harness,
  })
  return session_id
}

describe('automatic compaction', () => {
  it('marks a soft crossing pending, compacts at the next turn boundary, and keeps the protocol', async () => {
    const { service, model, deps, store } = fixture.engine
    const sid = await newSession()
    const script = scriptAgent(model, [
      ...toolTurn(1, 300, 550),
      ...toolTurn(2, 500, 750),
      ...toolTurn(3, 700, 950),
      ...toolTurn(4, 1000, 1650),
      ...toolTurn(5, 1700, 1750),
      ...toolTurn(6, 400, 450),
    ])
    const segments: string[] = []
    for (let n = 1; n <= 5; n++) {
      const turn = await service.stepTurn('t1', sid, { input: `task ${n}` })
      expect(turn.status).toBe('completed')
      expect(boundaries(turn.events)).toEqual([])
      const { state } = await committed(deps, 't1', sid)
      segments.push(state.compaction?.segment?.id ?? '')
      // The soft threshold is crossed at turn 5's boundary (1,650 reported + the new messages).
      expect(state.compaction?.pending ?? false).toBe(n === 5)
    }
    expect(new Set(segments)).toEqual(new Set(['segment-00000001']))
    expect(script.summaries).toBe(0)
    const before = await committed(deps, 't1', sid)
    expect(before.history).toHaveLength(20)

    const turn6 = await service.stepTurn('t1', sid, { input: 'task 6' })
    expect(turn6.status).toBe('completed')
    expect(script.summaries).toBe(1)
    const [boundary, ...more] = boundaries(turn6.events)
    expect(more).toEqual([])
    expect(turn6.events.slice(0, 2).map((e) => e.type)).toEqual([
      'turn.started',
      'thread.compact_boundary',
    ])
    const root = `t1/default/.vtcode/sessions/${sid}/`
    expect(boundary).toMatchObject({
      thread_id: sid,
      trigger: 'auto',
      mode: 'local',
      original_message_count: 21,
      previous_segment_id: 'segment-00000001',
      new_segment_id: 'segment-00000002',
    })
    expect(boundary?.history_artifact_path).toMatch(
      new RegExp(`^${root}history/${sid}_0006_\\d{8}T\\d{6}Z\\.jsonl$`),
    )
    // Same instructions and tools: a new segment, the same frozen prefix and catalog.
    expect(boundary?.new_prefix_hash).toBe(boundary?.previous_prefix_hash)
    expect(boundary?.new_catalog_hash).toBe(boundary?.previous_catalog_hash)
    expect(boundary?.new_catalog_hash).toMatch(/^[0-9a-f]{16}$/)

    // The archive holds the 21 messages; the envelope sits next to it and names it.
    const archive = await store.get(boundary?.history_artifact_path ?? '')
    const lines = new TextDecoder().decode(archive?.body).trim().split('\n')
    expect(lines.map((l) => JSON.parse(l) as HistoryMessage)).toEqual([
      ...before.history,
      { role: 'user', content: 'task 6' },
    ])
    const envelopeKey = (boundary?.history_artifact_path ?? '').replace(/\.jsonl$/, '.memory.json')
    const envelope = parseMemoryEnvelope((await store.get(envelopeKey))?.body ?? new Uint8Array())
    expect(envelope).toMatchObject({
      session_id: sid,
      schema_version: 3,
      summary: 'Summary 1: the user ran scripted tasks.',
      history_artifact_path: boundary?.history_artifact_path,
    })

    // The request right after the summary carries exactly the compacted history.
    const summaryAt = model.requests.findIndex(isSummaryRequest)
    const next = requestTranscript(model.requests[summaryAt + 1] as (typeof model.requests)[0])
    expect(next[0]).toEqual({ role: 'system', content: 'Be brief.' })
    const compacted = next.slice(1)
    expect(compacted).toHaveLength(boundary?.compacted_message_count ?? -1)
    expect(compacted[0]?.content).toBe(
      'Previous conversation summary:\nSummary 1: the user ran scripted tasks.',
    )
    expect(compacted.filter(isMemoryEnvelopeMessage)).toHaveLength(1)
    expect(compacted.length).toBeLessThan(21)

    // Tail: a verbatim suffix of the source, whole groups, within a quarter of the hard threshold.
    const source = [...before.history, { role: 'user', content: 'task 6' } as HistoryMessage]
    const body = compacted.filter((m) => !isMemoryEnvelopeMessage(m)).slice(1)
    let tailLength = 0
    while (
      tailLength < body.length &&
      equal(body[body.length - 1 - tailLength], source[source.length - 1 - tailLength])
    ) {
      tailLength++
    }
    const tailStart = body.length - tailLength
    const tail = body.slice(tailStart)
    const retained = body.slice(0, tailStart)
    expect(retained.every((m) => m.role === 'user')).toBe(true)
    expect(retained.length).toBeLessThanOrEqual(4)
    expect(tail[0]?.role).toBe('user')
    expect(tail.at(-1)).toEqual({ role: 'user', content: 'task 6' })
    const counter = new TokenCounter(await loadTokenizer('o200k_base'))
    const tailTokens = tail.reduce((sum, m) => sum + counter.countMessage(m), 0)
    expect(tailTokens).toBeLessThanOrEqual(450)
    expect(tail.length).toBeGreaterThan(1)

    const after = await committed(deps, 't1', sid)
    expect(after.state.compaction).toMatchObject({
      pending: false,
      compactions: 1,
      memory_envelope_path: envelopeKey,
      segment: { id: 'segment-00000002' },
    })
    expect(after.history.slice(0, compacted.length)).toEqual(compacted)
    assertNoOrphansInRequests(model.requests)
    expect(script.unexpected).toEqual([])
  })

  it('defers a hard crossing inside a tool loop to the turn boundary, and compacts a hard crossing there at once', async () => {
    const { service, model, deps } = fixture.engine
    const sid = await newSession()
    const script = scriptAgent(model, [
      ...toolTurn(1, 300, 500),
      ...toolTurn(2, 500, 700),
      ...toolTurn(3, 1900, 1950),
    ])
    for (let n = 1; n <= 3; n++) await service.stepTurn('t1', sid, { input: `task ${n}` })
    // Over the hard threshold after tool output: no summary call inside the loop.
    expect(script.summaries).toBe(0)
    expect((await committed(deps, 't1', sid)).state.compaction?.pending).toBe(true)

    script.push(...toolTurn(4, 600, 700))
    const turn4 = await service.stepTurn('t1', sid, { input: 'task 4' })
    expect(boundaries(turn4.events).map((b) => b.trigger)).toEqual(['auto'])
    expect(script.summaries).toBe(1)

    script.push(...toolTurn(5, 800, 1900))
    const turn5 = await service.stepTurn('t1', sid, { input: 'task 5' })
    expect(boundaries(turn5.events)).toEqual([])
    expect((await committed(deps, 't1', sid)).state.compaction?.pending).toBe(false)

    // 1,900 reported at the end of turn 5: turn 6 compacts before its first request.
    script.push(...toolTurn(6, 500, 600))
    const turn6 = await service.stepTurn('t1', sid, { input: 'task 6' })
    expect(boundaries(turn6.events)).toMatchObject([
      {
        trigger: 'auto',
        previous_segment_id: 'segment-00000002',
        new_segment_id: 'segment-00000003',
      },
    ])
    expect(script.summaries).toBe(2)
    assertNoOrphansInRequests(model.requests)
    expect(script.unexpected).toEqual([])
  })

  it('holds auto-compaction back after a failed summary call until a manual one succeeds', async () => {
    const { service, model, deps } = fixture.engine
    const sid = await newSession()
    const answer = (n: number, tokens: number) => ({
      text: `answer ${n}`,
      usage: { input_tokens: tokens, output_tokens: 5 },
    })
    const script = scriptAgent(
      model,
      [1, 2, 3, 4, 5, 6, 7].map((n) => answer(n, n < 5 ? 300 * n : 1950)),
      {
        summaries: [
          {
            fail: {
              kind: 'bad_request',
              status: 400,
              code: 'invalid_prompt',
              message: 'summary refused',
            },
          },
        ],
      },
    )
    for (let n = 1; n <= 5; n++) await service.stepTurn('t1', sid, { input: `task ${n}` })
    const failed = await service.stepTurn('t1', sid, { input: 'task 6' })
    expect(failed.status).toBe('completed')
    expect(boundaries(failed.events)).toEqual([])
    expect(failed.warnings).toEqual([expect.stringMatching(/^automatic compaction failed: /)])
    expect((await committed(deps, 't1', sid)).state.compaction?.suppressed).toBe('sticky')
    await service.stepTurn('t1', sid, { input: 'task 7' })
    expect(script.summaries).toBe(1)

    const manual = await service.compact('t1', sid)
    expect(boundaries(manual.events).map((b) => b.trigger)).toEqual(['manual'])
    expect((await committed(deps, 't1', sid)).state.compaction?.suppressed).toBeUndefined()
    expect(script.unexpected).toEqual([])
  })

  it('leaves the session alone when auto-compaction is disabled', async () => {
    const { service, model, deps } = fixture.engine
    const sid = await newSession({ max_context_tokens: 2000, auto_compaction_enabled: false })
    const script = scriptAgent(model, [
      ...toolTurn(1, 300, 1900),
      ...toolTurn(2, 1950, 1990),
      ...toolTurn(3, 1995, 1999),
    ])
    for (let n = 1; n <= 3; n++) {
      const turn = await service.stepTurn('t1', sid, { input: `task ${n}` })
      expect(boundaries(turn.events)).toEqual([])
    }
    expect(script.summaries).toBe(0)
    expect((await committed(deps, 't1', sid)).state.compaction?.pending).toBe(false)
  })
})

function equal(a: HistoryMessage | undefined, b: HistoryMessage | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { parseMemoryEnvelope } from '../../src/contract/memory-envelope.ts'
import { buildMemoryEnvelope } from '../../src/core/compaction/build-envelope.ts'
import {
  completeLocalCompaction,
  envelopePlacementFor,
  planLocalCompaction,
  SUMMARY_INSTRUCTION,
  summaryText,
} from '../../src/core/compaction/local-compaction.ts'
import { preCompactPayload } from '../../src/core/compaction/pre-compact-payload.ts'
import { assertNoOrphans } from '../../src/core/compaction/protocol-groups.ts'
import {
  isMemoryEnvelopeMessage,
  renderMemoryEnvelope,
} from '../../src/core/compaction/render-envelope.ts'
import { TokenCounter } from '../../src/core/compaction/token-counter.ts'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { scriptedHistory } from '../support/compaction-histories.ts'

const counter = new TokenCounter(approximateTokenizer)
const continuity = { countTokens: (m: HistoryMessage) => counter.countMessage(m) }
const priorEnvelope = parseMemoryEnvelope(
  readFileSync(new URL('../fixtures/compaction/memory-envelope-v3.json', import.meta.url), 'utf8'),
)
const NOW = '2026-08-23T04:00:00Z'

describe('local compaction', () => {
  it('builds one summary request, then [summary] + retained users + tail + envelope', () => {
    const history: HistoryMessage[] = [
      { role: 'system', content: renderMemoryEnvelope(priorEnvelope) },
      ...scriptedHistory(21, 300),
    ]
    const plan = planLocalCompaction(history, { force: false, now: NOW, continuity })
    if (plan.kind !== 'summarize') throw new Error('expected a plan')
    expect(plan.originalMessageCount).toBe(history.length - 1)
    expect(plan.request).toHaveLength(2)
    expect(plan.request[0]).toEqual({ role: 'system', content: SUMMARY_INSTRUCTION })
    const transcript = plan.request[1]?.content ?? ''
    expect(transcript.startsWith(`Summary requested at ${NOW}.`)).toBe(true)
    expect(transcript).toContain('[user]\ntask 0:')
    expect(transcript).toMatch(/\[tool call_\d+_\d+_\d+\]/)
    expect(transcript).toMatch(/→ tool call call_\d+_0_0: read_file\(\{"path":/)
    expect(transcript).not.toContain('[Session Memory Envelope]')

    const envelope = buildMemoryEnvelope({
      sessionId: 's',
      summary: 'Did X.',
      generatedAt: NOW,
      prior: priorEnvelope,
    })
    const result = completeLocalCompaction(plan, '  Did X.\n', envelope, 'start')
    const { messages } = result
    expect(messages[0]).toEqual({ role: 'system', content: renderMemoryEnvelope(envelope) })
    expect(messages[1]).toEqual({
      role: 'system',
      content: 'Previous conversation summary:\nDid X.',
    })
    const retained = messages.slice(2, 2 + plan.selection.retainedUsers.length)
    expect(retained).toEqual(plan.selection.retainedUsers)
    expect(retained.length).toBe(4)
    expect(messages.slice(2 + retained.length)).toEqual(plan.selection.tail)
    expect(messages.filter(isMemoryEnvelopeMessage)).toHaveLength(1)
    expect(result.compactedMessageCount).toBe(messages.length)
    expect(result.originalMessageCount).toBe(history.length - 1)
    expect(messages.length).toBeLessThan(history.length / 5)
    expect(plan.selection.tailTokens).toBeLessThanOrEqual(20_000)
    assertNoOrphans(messages)
  })

  it('places the auto-compaction envelope before the last user message', () => {
    const plan = planLocalCompaction(scriptedHistory(4, 60), { force: false, now: NOW, continuity })
    if (plan.kind !== 'summarize') throw new Error('expected a plan')
    const envelope = buildMemoryEnvelope({ sessionId: 's', summary: 'S', generatedAt: NOW })
    const { messages } = completeLocalCompaction(plan, 'S', envelope, envelopePlacementFor('auto'))
    const at = messages.findIndex(isMemoryEnvelopeMessage)
    expect(messages[at + 1]?.role).toBe('user')
    expect(messages.slice(at + 1).some((m) => m.role === 'user' && m !== messages[at + 1])).toBe(
      false,
    )
    assertNoOrphans(messages)
    expect(envelopePlacementFor('manual')).toBe('start')
  })

  it('gives up tail groups under a long summary in one pass, reading each message a bounded number of times', () => {
    let reads = 0
    const groups = 4_000
    const tail: HistoryMessage[] = Array.from({ length: groups }, (_, i) => {
      const message: HistoryMessage = { role: 'user', content: i % 2 === 0 ? 'a' : 'b' }
      return new Proxy(message, {
        get(target, key, receiver) {
          if (key === 'content') reads += 1
          return Reflect.get(target, key, receiver)
        },
      })
    })
    const source = [{ role: 'user' as const, content: 'older' }, ...tail]
    const plan = {
      kind: 'summarize' as const,
      source,
      originalMessageCount: source.length,
      request: [],
      selection: {
        retainedUsers: [],
        tail,
        retainedTokens: 0,
        tailTokens: groups * 4,
        tailStart: 1,
        droppedFromNewest: 0,
        previewed: false,
      },
    }
    const envelope = buildMemoryEnvelope({ sessionId: 's', summary: 'S', generatedAt: NOW })
    // Longer than everything it replaces: every group goes, the summary covers them.
    const long = completeLocalCompaction(plan, 'S'.repeat(2 * groups), envelope, 'start')
    expect(long.messages.filter((m) => m.role === 'user')).toEqual([])
    expect(reads).toBeLessThan(8 * groups)
    // Shorter than what it replaces with half the tail gone: the newest half stays.
    reads = 0
    const half = completeLocalCompaction(plan, 'S'.repeat(groups / 2), envelope, 'start')
    const kept = half.messages.filter((m) => m.role === 'user')
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.length).toBeLessThan(groups)
    expect(kept).toEqual(tail.slice(groups - kept.length))
    expect(reads).toBeLessThan(8 * groups)
  })

  it('skips histories of ≤ 10 messages unless forced', () => {
    const short = scriptedHistory(2, 1).slice(0, 10)
    expect(planLocalCompaction(short, { force: false, now: NOW, continuity })).toEqual({
      kind: 'skip',
      reason: 'too_short',
    })
    expect(planLocalCompaction(short, { force: true, now: NOW, continuity }).kind).toBe('summarize')
  })

  it('uses manual instructions and bounds huge messages in the request', () => {
    const history = scriptedHistory(8, 12)
    history.push({ role: 'tool', tool_call_id: 'x', content: 'y'.repeat(100_000) })
    const plan = planLocalCompaction(history, {
      force: true,
      now: NOW,
      instructions: 'Only list files.',
      continuity,
    })
    if (plan.kind !== 'summarize') throw new Error('expected a plan')
    expect(plan.request[0]?.content).toBe('Only list files.')
    expect(plan.request[1]?.content.length).toBeLessThan(60_000)
  })

  it('derives a summary when the model answers blank', () => {
    const history = scriptedHistory(3, 3)
    expect(summaryText('  ', history)).toMatch(
      /^Compacted earlier conversation state\. Recent preserved context: /,
    )
    expect(summaryText('', [])).toBe(
      'Compacted earlier conversation state and preserved continuity facts.',
    )
  })
})

describe('pre_compact hook payload', () => {
  it('has exactly the reference fields, in order, with nulls for unknown paths', () => {
    const payload = preCompactPayload({
      sessionId: 's-1',
      cwd: '/workspace',
      trigger: 'auto',
      mode: 'local',
      originalMessageCount: 120,
      compactedMessageCount: 14,
    })
    expect(JSON.stringify(payload)).toBe(
      '{"session_id":"s-1","cwd":"/workspace","hook_event_name":"PreCompact","transcript_path":null,' +
        '"trigger":"auto","mode":"local","original_message_count":120,"compacted_message_count":14,' +
        '"history_artifact_path":null}',
    )
    expect(
      preCompactPayload({
        sessionId: 's',
        cwd: '/',
        transcriptPath: 'events.jsonl',
        trigger: 'manual',
        mode: 'provider',
        originalMessageCount: 1,
        compactedMessageCount: 1,
        historyArtifactPath: 'h.jsonl',
      }),
    ).toMatchObject({ transcript_path: 'events.jsonl', history_artifact_path: 'h.jsonl' })
  })
})

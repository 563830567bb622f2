import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { parseMemoryEnvelope } from '../../src/contract/memory-envelope.ts'
import { isMemoryEnvelopeMessage } from '../../src/core/compaction/render-envelope.ts'
import { boundaries, committed } from '../support/compaction-engine.ts'
import { echoTool, startEngine } from '../support/engine-harness.ts'
import type { MockRequest, MockStep } from '../support/mock-openai.ts'

/**
 * Provider compaction (mode `provider`): a session on the Responses API compacts through
 * `POST /responses/compact`, and the next request carries the returned compaction item; a failed
 * provider call falls back to a local summary; Chat sessions compact locally.
 */
let engine: Awaited<ReturnType<typeof startEngine>>
beforeAll(async () => {
  engine = await startEngine()
})
afterEach(() => {
  try {
    engine.mock.assertDone()
  } finally {
    engine.mock.reset()
  }
})
afterAll(async () => {
  await engine.close()
})

const RESPONSES = { name: 'gpt-5', api: 'responses' as const }

async function newSession(
  model: { name: string; api: 'chat' | 'responses' } = RESPONSES,
  harness: Record<string, unknown> = { max_context_tokens: 2000 },
) {
  const { session_id } = await engine.service.createSession('t1', {
    instructions: 'Be brief.',
    tools: [echoTool(engine.receiver.url)],
    model,
    harness,
  })
  return session_id
}

/** Five plain turns (10 messages); the last reports `lastInput` prompt tokens. */
async function fiveTurns(sid: string, api: 'chat' | 'responses', lastInput = 100) {
  for (let n = 1; n <= 5; n++) {
    engine.mock.enqueue({
      api,
      text: `answer ${n}`,
      usage: { input_tokens: n === 5 ? lastInput : 100, output_tokens: 5 },
    })
    const turn = await engine.service.stepTurn('t1', sid, { input: `task ${n}` })
    expect(turn.status).toBe('completed')
    expect(boundaries(turn.events)).toEqual([])
  }
}

const compactRequests = () => engine.mock.requests.filter((r) => r.api === 'compact')
const inputOf = (request: MockRequest | undefined) =>
  (request?.body.input ?? []) as Record<string, unknown>[]

describe('provider compaction', () => {
  it('compacts a Responses session over the threshold through responses.compact', async () => {
    const { service, mock, deps, store } = engine
    const sid = await newSession()
    await fiveTurns(sid, 'responses', 1850)
    mock.enqueue(
      {
        api: 'compact',
        compaction: { encrypted_content: 'enc-opaque-1', id: 'cmp_1' },
        usage: { input_tokens: 900, output_tokens: 60 },
      },
      { api: 'responses', text: 'answer 6', usage: { input_tokens: 300, output_tokens: 5 } },
    )
    const before = await committed(deps, 't1', sid)
    const turn6 = await service.stepTurn('t1', sid, { input: 'task 6' })
    expect(turn6.status).toBe('completed')
    const [boundary, ...more] = boundaries(turn6.events)
    expect(more).toEqual([])
    expect(boundary).toMatchObject({
      trigger: 'auto',
      mode: 'provider',
      original_message_count: 11,
      previous_segment_id: 'segment-00000001',
      new_segment_id: 'segment-00000002',
    })

    // One compact request with the whole transcript and the session instructions.
    const [compact, ...others] = compactRequests()
    expect(others).toEqual([])
    expect(compact?.path).toBe('/v1/responses/compact')
    expect(compact?.body).toMatchObject({ model: 'gpt-5', instructions: 'Be brief.' })
    expect(inputOf(compact).filter((item) => item.role === 'user')).toHaveLength(6)

    // The next request carries the compaction item; nothing was summarized locally.
    const next = mock.requests.at(-1)
    expect(next?.api).toBe('responses')
    expect(inputOf(next)).toContainEqual({
      type: 'compaction',
      encrypted_content: 'enc-opaque-1',
      id: 'cmp_1',
    })
    expect(mock.requests.filter((r) => r.api === 'chat')).toEqual([])

    // Transcript: the six user messages, the compaction item, the envelope, then the answer.
    const after = await committed(deps, 't1', sid)
    const item: HistoryMessage = {
      role: 'compaction',
      provider: 'openai',
      content: '',
      encrypted_content: 'enc-opaque-1',
      id: 'cmp_1',
    }
    expect(after.history).toContainEqual(item)
    expect(after.history.filter(isMemoryEnvelopeMessage)).toHaveLength(1)
    expect(after.history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'task 1',
      'task 2',
      'task 3',
      'task 4',
      'task 5',
      'task 6',
    ])
    expect(after.history.at(-1)).toEqual({ role: 'assistant', content: 'answer 6' })
    expect(after.history.length).toBe((boundary?.compacted_message_count ?? 0) + 1)
    // The compact call's usage counts toward the session.
    expect(after.state.usage.input_tokens - before.state.usage.input_tokens).toBe(900 + 300)
    expect(after.state.compaction?.compactions).toBe(1)

    // Archive and envelope are written as for local compaction.
    const archive = await store.get(boundary?.history_artifact_path ?? '')
    expect(new TextDecoder().decode(archive?.body).trim().split('\n')).toHaveLength(11)
    const envelopeKey = (boundary?.history_artifact_path ?? '').replace(/\.jsonl$/, '.memory.json')
    const envelope = parseMemoryEnvelope((await store.get(envelopeKey))?.body ?? new Uint8Array())
    expect(envelope.summary).toMatch(/^Compacted earlier conversation state/)
  })

  it('uses provider mode for POST /compact and chains compaction items', async () => {
    const { service, mock, deps } = engine
    const sid = await newSession()
    await fiveTurns(sid, 'responses')
    mock.enqueue({ api: 'compact', compaction: { encrypted_content: 'enc-a' } })
    const first = await service.compact('t1', sid)
    expect(boundaries(first.events)).toEqual([
      expect.objectContaining({ trigger: 'manual', mode: 'provider', original_message_count: 10 }),
    ])
    // A second compaction sends the first item back as input.
    mock.enqueue({ api: 'compact', compaction: { encrypted_content: 'enc-b' } })
    const second = await service.compact('t1', sid)
    expect(boundaries(second.events)[0]).toMatchObject({ mode: 'provider' })
    expect(inputOf(compactRequests()[1])).toContainEqual(
      expect.objectContaining({ type: 'compaction', encrypted_content: 'enc-a' }),
    )
    const { history } = await committed(deps, 't1', sid)
    expect(history.filter((m) => m.role === 'compaction')).toEqual([
      expect.objectContaining({ encrypted_content: 'enc-b' }),
    ])
  })

  it('keeps the tail when the provider answers with a summary only', async () => {
    const { service, mock, deps } = engine
    const sid = await newSession()
    await fiveTurns(sid, 'responses')
    const summary = { type: 'output_text', text: 'The user ran five tasks.', annotations: [] }
    const output = [{ type: 'message', role: 'assistant', status: 'completed', content: [summary] }]
    mock.enqueue({ api: 'compact', compaction: { output } })
    const response = await service.compact('t1', sid)
    expect(boundaries(response.events)[0]).toMatchObject({ mode: 'provider' })
    expect(response.warnings).toContainEqual(expect.stringMatching(/summary only/))
    const { history } = await committed(deps, 't1', sid)
    expect(history.some((m) => m.role === 'compaction')).toBe(false)
    expect(history).toContainEqual({ role: 'assistant', content: 'The user ran five tasks.' })
    expect(history.at(-1)).toEqual({ role: 'assistant', content: 'answer 5' })
  })

  it('leaves out a call cut from its result in the middle of the window', async () => {
    const { service, mock, deps } = engine
    const sid = await newSession()
    await fiveTurns(sid, 'responses')
    const said = (role: string, text: string) => ({ type: 'message', role, content: text })
    const output = [
      said('user', 'task 1'),
      { type: 'function_call', call_id: 'call_cut', name: 'lookup', arguments: '{}' },
      said('user', 'task 2'),
      { type: 'function_call_output', call_id: 'call_gone', output: 'no call made this' },
      said('user', 'task 3'),
      { type: 'compaction', encrypted_content: 'enc-cut', id: 'cmp_cut' },
    ]
    mock.enqueue({ api: 'compact', compaction: { output } })
    expect(boundaries((await service.compact('t1', sid)).events)).toHaveLength(1)
    mock.enqueue({ api: 'responses', text: 'answer 6' })
    expect((await service.stepTurn('t1', sid, { input: 'task 6' })).status).toBe('completed')
    // The next request carries no half of a pair: the provider would reject either.
    const types = inputOf(mock.requests.at(-1)).map((item) => item.type ?? item.role)
    expect(types).not.toContain('function_call')
    expect(types).not.toContain('function_call_output')
    const { history } = await committed(deps, 't1', sid)
    expect(history.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.tool_calls))).toBe(
      false,
    )
  })

  it('falls back to a local summary when the provider call fails', async () => {
    const { service, mock, deps } = engine
    const sid = await newSession()
    await fiveTurns(sid, 'responses')
    const steps: MockStep[] = [
      { api: 'compact', status: 400, code: 'invalid_request_error', message: 'no compaction' },
      { api: 'responses', text: 'Local summary.' },
    ]
    mock.enqueue(...steps)
    const response = await service.compact('t1', sid)
    expect(boundaries(response.events)).toEqual([
      expect.objectContaining({ trigger: 'manual', mode: 'local' }),
    ])
    expect(response.warnings).toContainEqual(expect.stringMatching(/^provider compaction failed/))
    const { history } = await committed(deps, 't1', sid)
    expect(history).toContainEqual({
      role: 'system',
      content: 'Previous conversation summary:\nLocal summary.',
    })
    expect(history.some((m) => m.role === 'compaction')).toBe(false)
  })

  it('compacts locally with provider_compaction off, with manual instructions, and on Chat', async () => {
    const { service, mock } = engine
    const off = await newSession(RESPONSES, { provider_compaction: false })
    await fiveTurns(off, 'responses')
    mock.enqueue({ api: 'responses', text: 'Summary off.' })
    expect(boundaries((await service.compact('t1', off)).events)[0]?.mode).toBe('local')

    const instructed = await newSession()
    await fiveTurns(instructed, 'responses')
    mock.enqueue({ api: 'responses', text: 'Summary instructed.' })
    const response = await service.compact('t1', instructed, { instructions: 'One line.' })
    expect(boundaries(response.events)[0]?.mode).toBe('local')

    const chat = await newSession({ name: 'gpt-4o-mini', api: 'chat' })
    await fiveTurns(chat, 'chat')
    mock.enqueue({ api: 'chat', text: 'Summary chat.' })
    expect(boundaries((await service.compact('t1', chat)).events)[0]?.mode).toBe('local')
    expect(compactRequests()).toEqual([])
  })
})

describe('a model switch away from a compaction item, stopped before the platform timeout', () => {
  it('is compacted, as a switch, by the continuation of the turn it paused', async () => {
    const { service, mock, deps } = engine
    const model = deps.defaults.model
    deps.defaults.model = 'gpt-5'
    try {
      // The session names no model: the deployment's is in force.
      const { session_id: sid } = await service.createSession('t1', {
        instructions: 'Be brief.',
        model: { api: 'responses' },
        harness: { max_context_tokens: 2000 },
      })
      await fiveTurns(sid, 'responses')
      mock.enqueue({ api: 'compact', compaction: { encrypted_content: 'enc-gpt-5' } })
      await service.compact('t1', sid)
      // Short: the kept user messages and the item only the old model reads.
      const { history } = await committed(deps, 't1', sid)
      expect(history.filter((m) => m.role === 'compaction')).toHaveLength(1)
      expect(history.length).toBeLessThan(10)

      deps.defaults.model = 'gpt-5-mini'
      // The switch's compact request arrives with 9 s left and would take 20 s: it is stopped.
      const asked = compactRequests().length
      const timeLeft = () => (compactRequests().length > asked ? 9_000 : 300_000)
      mock.enqueue({ api: 'compact', compaction: { encrypted_content: 'x' }, delayMs: 20_000 })
      const paused = await service.stepTurn('t1', sid, { input: 'task 6' }, { timeLeft })
      expect(paused.status).toBe('waiting')
      expect(paused.warnings?.join('\n')).toContain(
        "paused: the request's time ran out while the session was compacted",
      )
      expect(boundaries(paused.events)).toEqual([])

      // Continued: the switch's compaction runs (before: an automatic one, skipped as too short,
      // and the new model was sent the old model's item).
      mock.enqueue(
        { api: 'compact', compaction: { encrypted_content: 'enc-gpt-5-mini' } },
        { api: 'responses', text: 'answer 6' },
      )
      const continued = await service.stepTurn('t1', sid, {}, { timeLeft: () => 300_000 })
      expect(continued.status).toBe('completed')
      expect(boundaries(continued.events)).toEqual([
        expect.objectContaining({ trigger: 'model_switch', mode: 'provider' }),
      ])
      expect(compactRequests().at(-1)?.body).toMatchObject({ model: 'gpt-5-mini' })
      const next = mock.requests.at(-1)
      expect(next?.api).toBe('responses')
      expect(inputOf(next)).toContainEqual(
        expect.objectContaining({ type: 'compaction', encrypted_content: 'enc-gpt-5-mini' }),
      )
      expect(inputOf(next)).not.toContainEqual(
        expect.objectContaining({ encrypted_content: 'enc-gpt-5' }),
      )
      const state = (await committed(deps, 't1', sid)).state
      expect(state.compaction?.switch_pending).toBeUndefined()
    } finally {
      deps.defaults.model = model
    }
  }, 60_000)
})

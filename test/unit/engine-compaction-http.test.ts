import { describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { TurnResponse } from '../../src/contract/api.ts'
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

/** `POST /v1/sessions/:id/compact` through the HTTP app, on the real engine (tenant `local`). */
const fixture = useScriptedEngine()
const app = () => createApp({ api: fixture.engine.service, auth: { keys: [] }, log: () => {} })

async function post(path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await app().request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

async function createSession(body: Record<string, unknown> = {}) {
  const created = await post('/v1/sessions', { instructions: 'Be brief.', ...body })
  expect(created.status).toBe(201)
  return created.json.session_id as string
}

describe('POST /v1/sessions/:id/compact', () => {
  it('always summarizes, answers the boundary, and a retried key gets the same answer', async () => {
    const { model, deps } = fixture.engine
    const sid = await createSession()
    const script = scriptAgent(model, [{ text: 'a1' }, { text: 'a2' }, { text: 'a3' }])
    for (const input of ['q1', 'q2', 'q3']) {
      expect((await post(`/v1/sessions/${sid}/turns`, { input })).status).toBe(200)
    }
    const key = { 'idempotency-key': 'compact-1' }
    const first = await post(
      `/v1/sessions/${sid}/compact`,
      { instructions: 'Summarize in one line.' },
      key,
    )
    expect(first.status).toBe(200)
    const response = first.json as unknown as TurnResponse
    expect(response.status).toBe('completed')
    expect(response.events).toEqual([
      expect.objectContaining({
        type: 'thread.compact_boundary',
        thread_id: sid,
        trigger: 'manual',
        mode: 'local',
        original_message_count: 6,
        compacted_message_count: 4, // envelope, summary, q1, q2: a compaction never grows the request
        new_segment_id: 'segment-00000002',
        previous_segment_id: 'segment-00000001',
      }),
    ])
    // The manual instructions replaced the default summary instruction; no tools were offered.
    const summary = model.requests.find(isSummaryRequest)
    expect(requestTranscript(summary as NonNullable<typeof summary>)[0]).toEqual({
      role: 'system',
      content: 'Summarize in one line.',
    })
    expect(summary?.tools).toEqual([])

    const again = await post(
      `/v1/sessions/${sid}/compact`,
      { instructions: 'Summarize in one line.' },
      key,
    )
    expect(again).toEqual(first)
    expect(script.summaries).toBe(1)

    // Manual compaction puts the envelope first, then the summary and the short history.
    const { history } = await committed(deps, 'local', sid)
    expect(isMemoryEnvelopeMessage(history[0] as (typeof history)[0])).toBe(true)
    expect(history[1]?.content).toMatch(/^Previous conversation summary:\n/)
    // A short transcript is replaced by the summary (a compaction never grows the request); the
    // user's earlier messages stay verbatim after it.
    expect(history.slice(2)).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'user', content: 'q2' },
    ])

    script.push({ text: 'a4' })
    const next = await post(`/v1/sessions/${sid}/turns`, { input: 'q4' })
    expect((next.json as unknown as TurnResponse).status).toBe('completed')
    expect(boundaries((next.json as unknown as TurnResponse).events)).toEqual([])
    assertNoOrphansInRequests(model.requests)
    expect(script.unexpected).toEqual([])
  })

  it('refuses what it cannot compact with clear 4xx answers', async () => {
    const { model, receiver } = fixture.engine
    const empty = await createSession()
    expect(await post(`/v1/sessions/${empty}/compact`)).toMatchObject({
      status: 409,
      json: { error: { code: 'conflict' } },
    })
    expect(await post(`/v1/sessions/${empty}/compact`, { bogus: 1 })).toMatchObject({
      status: 400,
    })
    expect(await post('/v1/sessions/session-nope/compact')).toMatchObject({ status: 404 })

    const asking = await createSession({
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    scriptAgent(model, [{ toolCalls: [{ id: 'call_a', name: 'lookup', arguments: '{"q":"x"}' }] }])
    const turn = await post(`/v1/sessions/${asking}/turns`, { input: 'look it up' })
    expect((turn.json as unknown as TurnResponse).status).toBe('awaiting_approval')
    const open = await post(`/v1/sessions/${asking}/compact`)
    expect(open).toMatchObject({ status: 409, json: { error: { code: 'conflict' } } })
    expect(String((open.json.error as { message: string }).message)).toMatch(/still open/)

    await post(`/v1/sessions/${asking}/cancel`)
    expect(await post(`/v1/sessions/${asking}/compact`)).toMatchObject({
      status: 409,
      json: { error: { code: 'session_completed' } },
    })
  })
})

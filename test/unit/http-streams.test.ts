import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { FollowOptions } from '../../functions/http/event-feed.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { serializeEvent } from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { parseSse } from '../support/sse-frames.ts'
import { testClock } from '../support/test-clock.ts'

const SSE = { accept: 'text/event-stream' }
const servers: RunningServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

async function setup(follow: FollowOptions = { pollMs: 20, maxMs: 5_000, heartbeatMs: 15_000 }) {
  const api = new FakeSessionApi()
  const app = createApp({ api, auth: { keys: [] }, follow, log: () => {} })
  const server = await serveApp(app)
  servers.push(server)
  const { session_id: id } = await api.createSession('local', {})
  const call = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init)
  const turn = (input: string, headers: Record<string, string> = {}) =>
    call(`/v1/sessions/${id}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ input }),
    })
  return { api, id, call, turn }
}

describe('turn responses as SSE', () => {
  it('streams each event (id = seq, event = type, data = bare event), then turn.result', async () => {
    const { api, turn } = await setup()
    api.eventDelayMs = 15
    const res = await turn('hi', SSE)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const { frames } = parseSse(await res.text())
    expect(frames.map((f) => [f.id, f.event])).toEqual([
      ['1', 'turn.started'],
      ['2', 'item.completed'],
      ['3', 'turn.completed'],
      [undefined, 'turn.result'],
    ])
    const result = JSON.parse(frames[3]?.data ?? '') as { events: ThreadEvent[]; next_seq: number }
    expect(result.next_seq).toBe(4)
    expect(frames.slice(0, 3).map((f) => f.data)).toEqual(
      result.events.map((e) => serializeEvent(e)),
    )
  })

  it('replays an idempotent retry with the same frames and the same result', async () => {
    const { api, turn } = await setup()
    api.eventDelayMs = 5
    const first = await (await turn('once', { ...SSE, 'idempotency-key': 'k-1' })).text()
    const again = await (await turn('once', { ...SSE, 'idempotency-key': 'k-1' })).text()
    expect(again).toBe(first)
    expect(api.calls.filter((c) => c === 'stepTurn')).toHaveLength(2)
    const json = await (await turn('once', { 'idempotency-key': 'k-1' })).text()
    expect(JSON.parse(json)).toEqual(JSON.parse(parseSse(first).frames[3]?.data ?? ''))
  })

  it('answers a plain 409 when the turn fails before any event', async () => {
    const { api, turn } = await setup()
    api.failNext = new TurnlineError('session_busy', 'busy', { retryAfter: 4 })
    const res = await turn('x', SSE)
    expect(res.status).toBe(409)
    expect(res.headers.get('retry-after')).toBe('4')
    expect(res.headers.get('content-type')).toContain('application/json')
  })

  it('reports a failure after the stream started as an error frame', async () => {
    const { api, turn } = await setup()
    api.eventDelayMs = 30
    api.failMidTurn = new TurnlineError('conflict', 'someone else committed first')
    const res = await turn('x', SSE)
    expect(res.status).toBe(200)
    const { frames } = parseSse(await res.text())
    expect(frames.map((f) => f.event)).toEqual(['turn.started', 'error'])
    expect(JSON.parse(frames[1]?.data ?? '')).toEqual({
      error: { code: 'conflict', message: 'someone else committed first' },
    })
  })
})

describe('events feed', () => {
  it('serves NDJSON {seq, schema_version, event} lines with canonical event bytes', async () => {
    const { id, call, turn } = await setup()
    const turnBody = JSON.parse(await (await turn('a')).text()) as { events: ThreadEvent[] }
    const res = await call(`/v1/sessions/${id}/events?after=0&limit=2`)
    expect(res.headers.get('content-type')).toContain('application/x-ndjson')
    expect(res.headers.get('turnline-next-seq')).toBe('3')
    const lines = (await res.text()).split('\n')
    expect(lines.pop()).toBe('')
    expect(lines).toEqual(
      turnBody.events
        .slice(0, 2)
        .map((e, i) => `{"seq":${i + 1},"schema_version":"0.11.0","event":${serializeEvent(e)}}`),
    )
  })

  it('serves SSE and resumes from Last-Event-ID (which wins over after=)', async () => {
    const { id, call, turn } = await setup()
    await turn('a')
    await turn('b')
    const all = parseSse(await (await call(`/v1/sessions/${id}/events`, { headers: SSE })).text())
    expect(all.frames.map((f) => f.id)).toEqual(['0', '1', '2', '3', '4', '5', '6'])
    expect(all.frames[0]).toEqual({
      id: '0',
      event: 'thread.started',
      data: `{"type":"thread.started","thread_id":"${id}"}`,
    })
    const resumed = await call(`/v1/sessions/${id}/events?after=0`, {
      headers: { ...SSE, 'last-event-id': '4' },
    })
    const frames = parseSse(await resumed.text()).frames
    expect(frames.map((f) => f.id)).toEqual(['5', '6'])
    expect(frames).toEqual(all.frames.slice(5))
  })

  it('follows new events until thread.completed, then ends', async () => {
    const { api, id, call } = await setup()
    const res = await call(`/v1/sessions/${id}/events?follow=1`)
    const reader = res.body?.getReader()
    if (!reader) throw new Error('no body')
    const decoder = new TextDecoder()
    let text = decoder.decode((await reader.read()).value)
    expect(text).toContain('"seq":0')
    await api.stepTurn('local', id, { input: 'later' })
    await api.complete('local', id)
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    const seqs = text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { seq: number }).seq)
    expect(seqs).toEqual([0, 1, 2, 3, 4])
    expect(text.trim().split('\n').pop()).toContain('"type":"thread.completed"')
  })

  it('answers at once when following a completed session that has nothing new', async () => {
    const { api, id, call } = await setup()
    await api.complete('local', id)
    const res = await call(`/v1/sessions/${id}/events?follow=1&after=1`, { headers: SSE })
    expect(await res.text()).toBe('')
  })

  it('stops following after the configured maximum, with keep-alives while idle', async () => {
    const { id, call } = await setup({ pollMs: 10, maxMs: 300, heartbeatMs: 50 })
    const started = Date.now()
    const res = await call(`/v1/sessions/${id}/events?follow=true`, { headers: SSE })
    const parsed = parseSse(await res.text())
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    expect(parsed.frames.map((f) => f.id)).toEqual(['0'])
    expect(parsed.comments.length).toBeGreaterThanOrEqual(2)
  })

  it('stops polling the store when the client disconnects', async () => {
    const clock = testClock()
    const follow = { pollMs: 10, maxMs: 60_000, heartbeatMs: 60_000, clock }
    const { api, id, call } = await setup(follow)
    const reads = () => api.calls.filter((c) => c === 'readEvents').length
    const abort = new AbortController()
    const res = await call(`/v1/sessions/${id}/events?follow=1`, { signal: abort.signal })
    const reader = res.body?.getReader()
    await reader?.read()
    // The feed polls at every interval while the client is there.
    await vi.waitFor(async () => {
      await clock.advance(10)
      expect(reads()).toBeGreaterThan(2)
    })
    abort.abort()
    // The disconnect reaches the feed: it cancels its wait and sets no timer again.
    await vi.waitFor(() => expect(clock.pending).toBe(0))
    const before = reads()
    await clock.advance(1000)
    expect(reads()).toBe(before)
  })

  it('answers 404 for a missing session before streaming', async () => {
    const { call } = await setup()
    const res = await call('/v1/sessions/missing/events?follow=1', { headers: SSE })
    expect(res.status).toBe(404)
  })
})

describe('exec', () => {
  it('streams bare ThreadEvent lines from thread.started to thread.completed', async () => {
    const { api, call } = await setup()
    api.eventDelayMs = 5
    const res = await call('/v1/exec', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'do it', workspace: 'w' }),
    })
    expect(res.headers.get('content-type')).toContain('application/x-ndjson')
    const lines = (await res.text()).trim().split('\n')
    const types = lines.map((l) => (JSON.parse(l) as ThreadEvent).type)
    expect(types).toEqual([
      'thread.started',
      'turn.started',
      'item.completed',
      'turn.completed',
      'thread.completed',
    ])
    for (const line of lines) expect(serializeEvent(JSON.parse(line) as ThreadEvent)).toBe(line)
  })

  it('ends with an error event line when the run fails mid-stream', async () => {
    const { api, call } = await setup()
    api.eventDelayMs = 20
    api.failMidTurn = new TurnlineError('storage_unavailable', 'S3 is down')
    const res = await call('/v1/exec', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'do it' }),
    })
    const lines = (await res.text()).trim().split('\n')
    expect(lines.at(-1)).toBe('{"type":"error","message":"S3 is down"}')
  })
})

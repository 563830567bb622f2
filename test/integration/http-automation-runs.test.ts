import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { AppInstance } from '../support/app-instance.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * Automation runs (`POST /v1/webhooks/:name`) on S3 + Upstash: every delivery runs once under a
 * key derived from it (not one fixed key per tenant), a caller's Idempotency-Key cannot block
 * them, the payload is put into the prompt literally, and each run ends its thread.
 */
const RAW_SECRET = Buffer.from('automation-secret-0123456789')
const API_KEY = 'api-key-automation-0123456789'
const TEMPLATE = 'Event $& follows: {{body}} (end)'
let deployment: TestDeployment
let mock: MockOpenAI
let app: AppInstance

beforeAll(async () => {
  deployment = await startTestDeployment('automation', {
    TURNLINE_API_KEYS: `${API_KEY}=acme`,
    TURNLINE_WEBHOOKS: JSON.stringify({
      triage: {
        secret: `whsec_${RAW_SECRET.toString('base64')}`,
        tenant: 'acme',
        session: { workspace: 'automation' },
        prompt: TEMPLATE,
      },
    }),
  })
  ;({ mock, app } = deployment)
})
afterAll(() => deployment?.close())
beforeEach(() => mock.reset())

interface Run {
  session_id: string
  duplicate: boolean
  turn: { status: string; events: ThreadEvent[] }
}

async function deliver(body: string, id: string): Promise<Run> {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', RAW_SECRET)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')
  const res = await fetch(`${app.url}/v1/webhooks/triage`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
    },
    body,
  })
  const text = await res.text()
  expect(res.status, text).toBe(200)
  return JSON.parse(text) as Run
}

const api = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  fetch(`${app.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  })

const unique = () => crypto.randomUUID().slice(0, 8)

describe('automation runs', () => {
  it('runs every delivery of a tenant once, and each run ends its thread', async () => {
    mock.respond(() => ({ text: 'Labelled.' }))
    const runs: Run[] = []
    for (let i = 0; i < 7; i++) runs.push(await deliver(`{"n":${i}}`, `msg_${unique()}_${i}`))
    expect(mock.requests).toHaveLength(7)
    for (const run of runs) {
      expect(run.duplicate).toBe(false)
      expect(run.turn.status).toBe('terminal')
      expect(run.turn.events.map((e) => e.type).slice(-2)).toEqual([
        'turn.completed',
        'thread.completed',
      ])
      expect(run.turn.events.at(-1)).toMatchObject({ subtype: 'success', result: 'Labelled.' })
      const view = await api(`/v1/sessions/${run.session_id}`)
      expect(await view.json()).toMatchObject({ status: 'completed', turn_count: 1 })
    }
    expect(new Set(runs.map((r) => r.session_id)).size).toBe(7)
  })

  it('answers a redelivery from the first run, and retention can prune the closed session', async () => {
    mock.enqueue({ text: 'Once.' })
    const id = `msg_${unique()}`
    const run = await deliver('{"x":1}', id)
    const again = await deliver('{"x":1}', id)
    expect(again).toEqual({ ...run, duplicate: true })
    expect(mock.requests).toHaveLength(1)

    const pruned = await app.deps.service.sessions.retention('acme', 'automation', {
      policy: { maxSessions: 0, maxAgeDays: 30 },
    })
    expect(pruned.deleted).toContain(run.session_id)
  })

  it('is not blocked by a caller who sends the Idempotency-Key an older version used', async () => {
    const created = await api('/v1/sessions', { method: 'POST', body: '{}' })
    const { session_id } = (await created.json()) as { session_id: string }
    mock.enqueue({ text: 'caller turn' }, { text: 'automation turn' })
    const own = await api(`/v1/sessions/${session_id}/turns`, {
      method: 'POST',
      headers: { 'idempotency-key': 'automation-run' },
      body: JSON.stringify({ input: 'hello' }),
    })
    expect(own.status).toBe(200)
    const run = await deliver('{"y":2}', `msg_${unique()}`)
    expect(run.turn.events.at(-1)).toMatchObject({ result: 'automation turn' })
    expect(mock.requests).toHaveLength(2)

    // The run's own key lives in a namespace no caller can send.
    const reach = await api(`/v1/sessions/${run.session_id}/turns`, {
      method: 'POST',
      headers: { 'idempotency-key': 'delivery/abc' },
      body: JSON.stringify({ input: 'x' }),
    })
    expect(reach.status).toBe(400)
  })

  it('puts the payload into the prompt literally, $-patterns and all', async () => {
    mock.enqueue({ text: 'ok' })
    const body = JSON.stringify({ text: "a $' b $` c $& d $$ e $1 f {{body}}" })
    await deliver(body, `msg_${unique()}`)
    const messages = mock.requests[0]?.body.messages as { role: string; content: string }[]
    expect(messages.at(-1)?.content).toBe(`Event $& follows: ${body} (end)`)
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'

/** Effort and sampling on sessions and on POST /v1/responses, through the real engine. */
const KEY = 'effort-key-0123456789abc'
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer

beforeAll(async () => {
  engine = await startEngine({ defaults: { model: 'o4-mini', modelApi: 'responses' } })
  server = await serveApp(
    createApp({ api: engine.service, auth: { keys: [{ key: KEY, tenant: 't' }] }, log: () => {} }),
  )
})
afterAll(async () => {
  await server?.close()
  await engine?.close()
})
beforeEach(() => engine.mock.reset())

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const REASONING = `${'Consider the parts of the question one by one. '.repeat(12)}Done.`

describe('model effort and sampling', () => {
  it('a session sends its effort and sampling; the name and API default to the deployment', async () => {
    engine.mock.enqueue({
      api: 'responses',
      reasoning: REASONING,
      text: 'Answer.',
      usage: { input_tokens: 20, output_tokens: 90, reasoning_tokens: 64 },
    })
    const { session_id } = await engine.service.createSession('t', {
      model: { reasoning_effort: 'low', temperature: 0.2, top_p: 0.5, max_output_tokens: 300 },
    })
    const turn = await engine.service.stepTurn('t', session_id, { input: 'Why?' })
    expect(turn.status).toBe('completed')
    expect(engine.mock.requests[0]?.body).toMatchObject({
      model: 'o4-mini',
      reasoning: { effort: 'low' },
      temperature: 0.2,
      top_p: 0.5,
      max_output_tokens: 300,
    })
    // Reasoning streams as a reasoning item: started, updated snapshots, completed, before the answer.
    const reasoning = turn.events.filter(
      (e): e is Extract<ThreadEvent, { item: unknown }> =>
        'item' in e && e.item.type === 'reasoning',
    )
    expect(reasoning[0]?.type).toBe('item.started')
    expect(reasoning.some((e) => e.type === 'item.updated')).toBe(true)
    expect(reasoning.at(-1)).toEqual({
      type: 'item.completed',
      item: { id: 'item_0', type: 'reasoning', text: REASONING },
    })
    expect(new Set(reasoning.map((e) => e.item.id))).toEqual(new Set(['item_0']))
    const view = await engine.service.getSession('t', session_id)
    expect(view.reasoning_tokens).toBe(64)
    expect(view.usage.output_tokens).toBe(90)
  })

  it('chat sessions send reasoning_effort; bad values are 400 before anything runs', async () => {
    engine.mock.enqueue({ api: 'chat', text: 'ok' })
    const { session_id } = await engine.service.createSession('t', {
      model: { name: 'gpt-5-mini', api: 'chat', reasoning_effort: 'minimal' },
    })
    await engine.service.stepTurn('t', session_id, { input: 'hi' })
    expect(engine.mock.requests[0]?.body).toMatchObject({
      model: 'gpt-5-mini',
      reasoning_effort: 'minimal',
    })
    for (const model of [{ reasoning_effort: 'huge' }, { temperature: 3 }, { top_p: -1 }]) {
      const res = await post('/v1/sessions', { model })
      expect(res.status).toBe(400)
    }
  })

  it('POST /v1/responses accepts temperature, top_p, max_output_tokens and reasoning', async () => {
    engine.mock.enqueue({ api: 'responses', reasoning: 'Short thought.', text: 'Fine.' })
    const res = await post('/v1/responses', {
      input: 'How are you?',
      temperature: 0.7,
      top_p: 0.8,
      max_output_tokens: 128,
      reasoning: { effort: 'medium', summary: 'concise' },
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { status: string; output: { type: string }[] }
    expect(body.status).toBe('completed')
    expect(body.output.map((item) => item.type)).toEqual(['reasoning', 'message'])
    expect(engine.mock.requests[0]?.body).toMatchObject({
      model: 'o4-mini',
      temperature: 0.7,
      top_p: 0.8,
      max_output_tokens: 128,
      reasoning: { effort: 'medium', summary: 'concise' },
    })
    const bad = await post('/v1/responses', { input: 'x', temperature: 9 })
    expect(bad.status).toBe(400)
    expect(engine.mock.requests).toHaveLength(1)
  })
})

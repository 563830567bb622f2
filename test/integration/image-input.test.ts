import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { SessionService } from '../../src/core/session-service.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { startEngineServer } from '../support/engine-harness.ts'

/**
 * Image input over real HTTP (`POST …/turns` and `POST /v1/responses`), the real engine and
 * OpenAI adapter, the mock OpenAI server behind them: images reach the model in the format of
 * its API, stay in the transcript for later turns, and a model known not to take images is a
 * 400 before anything runs.
 */
const KEY = 'image-input-key-0123456789'
// A 1×1 transparent PNG.
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
const SCREENSHOT = 'https://example.com/screens/failing-login.png'

let harness: Awaited<ReturnType<typeof startEngineServer>>
let engine: Awaited<ReturnType<typeof startEngineServer>>['engine']
let server: Awaited<ReturnType<typeof startEngineServer>>['server']

beforeAll(async () => {
  harness = await startEngineServer(KEY, 'tenant-img')
  ;({ engine, server } = harness)
})
afterAll(() => harness?.close())
beforeEach(() => engine.mock.reset())

async function post(path: string, body: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const session = async (model?: unknown) => {
  const created = await post('/v1/sessions', model === undefined ? {} : { model })
  expect(created.status).toBe(201)
  return created.body.session_id as string
}

const WITH_IMAGES = [
  { type: 'input_text', text: 'Why does the login fail?' },
  { type: 'input_image', image_url: PNG },
  { type: 'input_image', image_url: SCREENSHOT, detail: 'high' },
]

const lastUser = (messages: unknown) =>
  (messages as { role: string; content: unknown }[]).filter((m) => m.role === 'user').at(-1)

describe('image input', () => {
  it('sends a turn’s images to Chat Completions and keeps them for the next turns', async () => {
    const id = await session()
    engine.mock.enqueue({ text: 'The password field is empty.' }, { text: 'Yes.' })
    const first = await post(`/v1/sessions/${id}/turns`, { input: WITH_IMAGES })
    expect(first.status).toBe(200)
    expect(first.body.status).toBe('completed')
    const imageMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'Why does the login fail?' },
        { type: 'image_url', image_url: { url: PNG } },
        { type: 'image_url', image_url: { url: SCREENSHOT, detail: 'high' } },
      ],
    }
    expect(lastUser(engine.mock.requests[0]?.body.messages)).toEqual(imageMessage)

    // The next turn runs in a new service over the same store: the transcript is read back.
    const rehydrated = new SessionService({
      ...engine.deps,
      sessions: new SessionStore({ store: engine.store }),
    })
    const second = await rehydrated.stepTurn('tenant-img', id, { input: 'Is that all?' })
    expect(second.status).toBe('completed')
    const messages = engine.mock.requests[1]?.body.messages as unknown[]
    expect(messages).toContainEqual(imageMessage)
    expect(lastUser(messages)).toEqual({ role: 'user', content: 'Is that all?' })
    engine.mock.assertDone()

    // The PNG is stored once, apart: sent again from there, listed again as it was given.
    const { objects } = await engine.store.list('')
    const keys = objects.map((object) => object.key).filter((key) => key.includes(id))
    expect(keys.filter((key) => /\/images\/[0-9a-f]{64}\.json$/.test(key))).toHaveLength(1)
    for (const key of keys.filter((k) => /\/(log|state)\//.test(k))) {
      const body = new TextDecoder().decode((await engine.store.get(key))?.body)
      expect(body, key).not.toContain(';base64,')
    }
    const listed = await fetch(`${server.url}/v1/sessions/${id}/turns`, {
      headers: { authorization: `Bearer ${KEY}` },
    }).then((r) => r.json() as Promise<{ turns: { input?: { input?: unknown } }[] }>)
    expect(listed.turns[0]?.input?.input).toEqual(WITH_IMAGES)

    // A fork at that turn gets the image loaded, stores it in its own folder, and sends it on.
    const fork = await post(`/v1/sessions/${id}/fork`, { at_turn: 1 })
    expect(fork.status, JSON.stringify(fork.body)).toBe(201)
    const forkId = fork.body.session_id as string
    engine.mock.enqueue({ text: 'Forked.' })
    expect((await post(`/v1/sessions/${forkId}/turns`, { input: 'Again?' })).body.status).toBe(
      'completed',
    )
    expect(engine.mock.requests[2]?.body.messages as unknown[]).toContainEqual(imageMessage)
    const forkKeys = (await engine.store.list('')).objects.map((o) => o.key)
    expect(forkKeys.filter((k) => k.includes(forkId) && k.includes('/images/'))).toHaveLength(1)
  })

  it('sends them to the Responses API as input_image parts', async () => {
    const id = await session({ name: 'gpt-4.1-mini', api: 'responses' })
    engine.mock.enqueue({ api: 'responses', text: 'Empty password.' })
    expect((await post(`/v1/sessions/${id}/turns`, { input: WITH_IMAGES })).status).toBe(200)
    expect(lastUser(engine.mock.requests[0]?.body.input)).toEqual({
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'Why does the login fail?' },
        { type: 'input_image', image_url: PNG, detail: 'auto' },
        { type: 'input_image', image_url: SCREENSHOT, detail: 'high' },
      ],
    })
    engine.mock.assertDone()
  })

  it('refuses images for a model known to take none with a 400', async () => {
    for (const model of ['deepseek-chat', 'gpt-3.5-turbo']) {
      const id = await session(model)
      const refused = await post(`/v1/sessions/${id}/turns`, { input: WITH_IMAGES })
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: { code: 'invalid_input' } })
      expect(JSON.stringify(refused.body)).toMatch(/image/)
      const view = await engine.service.getSession('tenant-img', id)
      expect(view.turn_count).toBe(0)
    }
    expect(engine.mock.requests).toHaveLength(0)
  })

  it('refuses an image that is neither a data: image URL nor https', async () => {
    const id = await session()
    for (const image_url of ['http://example.com/a.png', 'data:text/plain;base64,aGk=']) {
      const refused = await post(`/v1/sessions/${id}/turns`, {
        input: [{ type: 'input_image', image_url }],
      })
      expect(refused.status).toBe(400)
    }
    expect(engine.mock.requests).toHaveLength(0)
  })

  it('POST /v1/responses takes input_image parts in user messages', async () => {
    engine.mock.enqueue({ text: 'A login form.' })
    const res = await post('/v1/responses', {
      model: 'gpt-4o-mini',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: SCREENSHOT },
          ],
        },
      ],
    })
    expect(res.status).toBe(200)
    expect(lastUser(engine.mock.requests[0]?.body.messages)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: SCREENSHOT } },
      ],
    })
    const misplaced = await post('/v1/responses', {
      input: [
        { role: 'system', content: [{ type: 'input_image', image_url: SCREENSHOT }] },
        { role: 'user', content: 'Hi' },
      ],
    })
    expect(misplaced.status).toBe(400)
    engine.mock.assertDone()
  })
})

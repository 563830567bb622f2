import { createHash, createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { WebhookConfigSchema } from '../../src/contract/webhook-config.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'

/** Standard Webhooks deliveries start exactly one automation run each. */
const RAW_SECRET = Buffer.from('automation-secret-0123456789')
const SECRET = `whsec_${RAW_SECRET.toString('base64')}`
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer

beforeAll(async () => {
  engine = await startEngine()
  const app = createApp({
    api: engine.service,
    // keys are configured: the webhook route must not need one
    auth: { keys: [{ key: 'api-key-0123456789abcdef', tenant: 'acme' }] },
    webhooks: {
      triage: WebhookConfigSchema.parse({
        secret: SECRET,
        tenant: 'acme',
        session: { instructions: 'Triage incoming issues.' },
        prompt: 'New issue event: {{body}}',
      }),
      // The default prompt: the payload as it is.
      raw: WebhookConfigSchema.parse({ secret: SECRET, tenant: 'acme' }),
    },
    log: () => {},
  })
  server = await serveApp(app)
})
afterAll(async () => {
  await server?.close()
  await engine?.close()
})

function deliver(
  body: string,
  id: string,
  options: { timestamp?: number; secret?: Buffer; timestampHeader?: string; hook?: string } = {},
) {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', options.secret ?? RAW_SECRET)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')
  return fetch(`${server.url}/v1/webhooks/${options.hook ?? 'triage'}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': options.timestampHeader ?? timestamp,
      'webhook-signature': `v1,${signature}`,
    },
    body,
  })
}

describe('POST /v1/webhooks/:name', () => {
  it('runs one automation turn per delivery, and answers a redelivery from the first run', async () => {
    engine.mock.reset()
    engine.mock.enqueue({ text: 'Labelled as bug.' })
    const body = JSON.stringify({ action: 'opened', title: 'Crash on save' })
    const first = await deliver(body, 'msg_1')
    expect(first.status).toBe(200)
    const run = (await first.json()) as {
      session_id: string
      duplicate: boolean
      turn: { status: string }
    }
    expect(run).toMatchObject({ duplicate: false, turn: { status: 'terminal' } })
    const sent = engine.mock.requests[0]?.body.messages as { role: string; content: string }[]
    expect(sent.map((m) => m.role)).toEqual(['system', 'user'])
    expect(sent[1]?.content).toBe(`New issue event: ${body}`)

    const again = await deliver(body, 'msg_1')
    const rerun = (await again.json()) as typeof run
    expect(rerun).toEqual({ ...run, duplicate: true })
    expect(engine.mock.requests).toHaveLength(1)
    const view = await engine.service.getSession('acme', run.session_id)
    expect(view.turn_count).toBe(1)
  })

  it('refuses bad signatures, stale timestamps and unknown hooks', async () => {
    expect(
      (await deliver('{}', 'msg_2', { secret: Buffer.from('wrong-secret-0123456789') })).status,
    ).toBe(401)
    expect(
      (await deliver('{}', 'msg_3', { timestamp: Math.floor(Date.now() / 1000) - 3600 })).status,
    ).toBe(401)
    const unsigned = await fetch(`${server.url}/v1/webhooks/triage`, { method: 'POST', body: '{}' })
    expect(unsigned.status).toBe(401)
    const unknown = await fetch(`${server.url}/v1/webhooks/nope`, { method: 'POST', body: '{}' })
    expect(unknown.status).toBe(404)
    expect(engine.mock.requests.length).toBeLessThanOrEqual(1)
  })

  it('refuses (401) a timestamp header that is not unix seconds, though its number was signed', async () => {
    const seconds = Math.floor(Date.now() / 1000)
    const answer = await deliver('{}', 'msg_4', {
      timestamp: seconds,
      timestampHeader: `${seconds}x`,
    })
    expect(answer.status).toBe(401)
    expect(await answer.json()).toEqual({
      error: {
        code: 'unauthorized',
        message: 'webhook rejected: webhook-timestamp is not unix seconds',
      },
    })
  })

  it('verifies a body that begins with a byte order mark as the bytes sent', async () => {
    engine.mock.reset()
    engine.mock.enqueue({ text: 'Read it.' })
    const body = '\uFEFF{"action":"opened"}'
    const answer = await deliver(body, 'msg_5')
    expect(answer.status, await answer.clone().text()).toBe(200)
    const sent = engine.mock.requests[0]?.body.messages as { role: string; content: string }[]
    expect(sent[1]?.content).toBe(`New issue event: ${body}`)
  })
})

describe('a delivery whose prompt is empty', () => {
  it('is refused 400 on the request path', async () => {
    engine.mock.reset()
    const answer = await deliver('', 'msg_empty', { hook: 'raw' })
    expect(answer.status, await answer.clone().text()).toBe(400)
    expect(await answer.json()).toEqual({
      error: {
        code: 'invalid_input',
        message:
          "the delivery's prompt is empty: the hook's prompt is the body, and the body is empty",
        details: { field: 'body' },
      },
    })
    // Nothing was recorded: no session was created (nor left open), no model called.
    const sessionId = `wh-raw-${createHash('sha256').update('msg_empty').digest('hex').slice(0, 24)}`
    await expect(engine.service.getSession('acme', sessionId)).rejects.toMatchObject({
      code: 'not_found',
    })
    expect(engine.mock.requests).toHaveLength(0)
  })
})

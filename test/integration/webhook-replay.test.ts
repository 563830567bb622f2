import { beforeAll, describe, expect, it } from 'vitest'
import { rememberUntilMs } from '../../functions/http/webhook-guards.ts'
import { deliveryMessage } from '../../functions/routes/webhook-routes.ts'
import { sha256Hex } from '../../src/shared/sha256-hex.ts'
import type { AppInstance } from '../support/app-instance.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { signMessage } from '../support/signed-callback.ts'
import { webhookDeployment } from '../support/webhook-deployment.ts'

/**
 * A captured webhook delivery replayed within its signature's window on S3 + Upstash: it never
 * runs again, on another instance or after a restart, even once the tenant deleted the run's
 * session (the session was the only duplicate check). A delivery whose first attempt was
 * recorded but never queued runs when it is resent, with the same bytes or signed anew.
 */
const deployment = webhookDeployment('whreplay')
const { secret: SECRET, apiKey: API_KEY, apps } = deployment
let mock: MockOpenAI
beforeAll(() => {
  mock = deployment.mock
})
const instance = () => apps.start()

/** A signed delivery as captured on the wire: the same bytes every time it is sent. */
function captured(id: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
  const signed = signMessage(SECRET, body, id, timestamp)
  return {
    timestamp,
    send: (on: AppInstance) => fetch(`${on.url}/v1/webhooks/triage`, { method: 'POST', ...signed }),
  }
}

const deleteSession = (on: AppInstance, id: string) =>
  fetch(`${on.url}/v1/sessions/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${API_KEY}` },
  })

describe('webhook replay', () => {
  it('never runs a captured delivery again, on any instance, after its session was deleted', async () => {
    mock.respond(() => ({ text: 'Handled.' }))
    const [a, b] = [await instance(), await instance()]
    const delivery = captured(`msg_${crypto.randomUUID()}`, '{"event":"push"}')
    const first = await delivery.send(a)
    expect(first.status).toBe(200)
    const run = (await first.json()) as { session_id: string; duplicate: boolean }
    expect(run.duplicate).toBe(false)
    const resent = await delivery.send(b)
    expect(resent.status).toBe(200)
    expect(await resent.json()).toMatchObject({ session_id: run.session_id, duplicate: true })
    expect(mock.requests).toHaveLength(1)

    expect((await deleteSession(a, run.session_id)).status).toBe(204)
    const restarted = await instance()
    for (const on of [a, b, restarted]) {
      const replay = await delivery.send(on)
      expect(replay.status).toBe(409)
      expect(await replay.json()).toMatchObject({ error: { code: 'conflict' } })
    }
    expect(mock.requests).toHaveLength(1)
    const gone = await fetch(`${a.url}/v1/sessions/${run.session_id}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    })
    expect(gone.status).toBe(404)
  })

  it('runs a delivery whose message was recorded but whose run never was, once, when it is resent', async () => {
    mock.respond(() => ({ text: 'Handled late.' }))
    const a = await instance()
    const id = `msg_${crypto.randomUUID()}`
    const lost = captured(id, '{"event":"lost"}', Math.floor(Date.now() / 1000) - 5)
    // What the route records before it creates the session; the process died right after.
    const message = deliveryMessage('triage', (await sha256Hex(id)).slice(0, 24))
    const guard = a.deps.http.webhookReplayGuard
    const until = rememberUntilMs(lost.timestamp, a.deps.http.webhookIdRetentionSeconds, Date.now())
    expect(await guard.claim(message, until)).toBe('first')

    // The same bytes again, on another instance: the run that never happened runs now.
    const resent = await lost.send(await instance())
    expect(resent.status).toBe(200)
    expect(await resent.json()).toMatchObject({ duplicate: false, turn: { status: 'terminal' } })
    expect(mock.requests).toHaveLength(1)
    // And once only: the same bytes, or the sender's redelivery signed anew, answer from it.
    const redelivery = captured(id, '{"event":"lost"}')
    for (const send of [lost.send, redelivery.send]) {
      const res = await send(await instance())
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ duplicate: true, turn: { status: 'terminal' } })
    }
    expect(mock.requests).toHaveLength(1)
  })
})

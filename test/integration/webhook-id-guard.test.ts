import { describe, expect, it } from 'vitest'
import type { AppInstance } from '../support/app-instance.ts'
import { crashingFetch } from '../support/crashing-fetch.ts'
import { heldFetch } from '../support/held-fetch.ts'
import { sendUntilFree, sessionKeys, webhookDelivery } from '../support/webhook-delivery.ts'
import { webhookDeployment } from '../support/webhook-deployment.ts'

/**
 * A webhook-id that ran never runs again while the guard remembers it (S3 + Upstash, across
 * instances and restarts), whatever became of its session: deleted or pruned by retention,
 * resent with the same bytes or signed anew by its sender, also when its first attempt died
 * before it said so; and a resend racing the deletion of its session never calls the model.
 */

/** The lease a dead instance's turn keeps: short, so a resend waits seconds, not a minute. */
const LEASE_MS = 3000
const deployment = webhookDeployment('whidguard', { TURNLINE_LEASE_MS: String(LEASE_MS) })
const { secret: SECRET, apiKey: API_KEY, apps } = deployment
/** The model the deployment calls (reset before each test). */
const model = () => deployment.mock
const now = () => Math.floor(Date.now() / 1000)

async function api(on: AppInstance, method: string, path: string) {
  return fetch(`${on.url}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}` } })
}

/** Retention prunes every closed session of the hook's workspace, as a full workspace does. */
async function pruneClosed(on: AppInstance): Promise<string[]> {
  const policy = { maxSessions: 0, maxAgeDays: 30 }
  return (await on.deps.service.sessions.retention('acme', 'default', { policy })).deleted
}

async function expectRefused(answer: Response): Promise<void> {
  expect(answer.status).toBe(409)
  expect(await answer.json()).toMatchObject({ error: { code: 'conflict' } })
}

describe('a webhook-id that ran', () => {
  it('is refused when its sender signs it anew after its session was deleted', async () => {
    model().respond(() => ({ text: 'Handled.' }))
    const a = await apps.start()
    const d = await webhookDelivery(SECRET, '{"event":"push"}', now() - 10)
    expect((await d.send(a)).status).toBe(200)
    expect((await api(a, 'DELETE', `/v1/sessions/${d.sessionId}`)).status).toBe(204)

    for (const on of [a, await apps.start()]) await expectRefused(await d.resign(now()).send(on))
    expect(model().requests).toHaveLength(1)
    expect((await api(a, 'GET', `/v1/sessions/${d.sessionId}`)).status).toBe(404)
  })

  it('is refused when its sender signs it anew after retention pruned its session', async () => {
    model().respond(() => ({ text: 'Handled, then pruned.' }))
    const a = await apps.start()
    const d = await webhookDelivery(SECRET, '{"event":"pruned"}', now() - 10)
    expect((await d.send(a)).status).toBe(200)
    expect(await pruneClosed(a)).toContain(d.sessionId)

    for (const on of [a, await apps.start()]) {
      await expectRefused(await d.resign(now()).send(on))
      await expectRefused(await d.send(on))
    }
    expect(model().requests).toHaveLength(1)
  })

  it('is refused after its first attempt died once its turn closed the session, and retention pruned it', async () => {
    model().respond(() => ({ text: 'Ran, never answered.' }))
    const d = await webhookDelivery(SECRET, '{"event":"crash"}')
    // The closing manifest write (after the model's answer) is the process's last request.
    const dying = crashingFetch(
      (method, path) =>
        method === 'PUT' &&
        path.includes(sessionKeys.manifest(d.sessionId)) &&
        model().requests.length > 0,
      'after',
    )
    // Whatever it answered (its answer needs no later request), nothing after that write was done.
    await d.send(await apps.start({ fetch: dying.fetch }))
    expect(dying.crashed()).toBe(true)
    expect(model().requests).toHaveLength(1)

    const restarted = await apps.start()
    expect(await pruneClosed(restarted)).toContain(d.sessionId)
    await expectRefused(await sendUntilFree(() => d.send(restarted), LEASE_MS))
    await expectRefused(await sendUntilFree(() => d.resign(now()).send(restarted), LEASE_MS))
    expect(model().requests).toHaveLength(1)
  })
})

describe('a resend racing the deletion of its session', () => {
  it('never calls the model: the session it would create again is the deleted one', async () => {
    model().respond(() => ({ text: 'Must not run.' }))
    const d = await webhookDelivery(SECRET, '{"event":"race"}')
    // The first attempt created the session and died before its turn.
    const dying = crashingFetch(
      (method, path) => method === 'PUT' && path.includes(sessionKeys.batch(0)(d.sessionId)),
      'after',
    )
    expect((await d.send(await apps.start({ fetch: dying.fetch }))).status).toBeGreaterThanOrEqual(
      500,
    )
    expect(dying.crashed()).toBe(true)

    // The resend stalls before it writes the session's pointer, while the tenant deletes it.
    const held = heldFetch(
      (method, path) => method === 'PUT' && path.includes(sessionKeys.pointer(d.sessionId)),
    )
    const resender = await apps.start({ fetch: held.fetch })
    const resent = d.send(resender)
    await held.reached
    const other = await apps.start()
    expect((await api(other, 'DELETE', `/v1/sessions/${d.sessionId}`)).status).toBe(204)
    held.release()

    await expectRefused(await resent)
    expect(model().requests).toHaveLength(0)
    expect((await api(other, 'GET', `/v1/sessions/${d.sessionId}`)).status).toBe(404)
    await expectRefused(await d.resign(now()).send(other))
    expect(model().requests).toHaveLength(0)
  })
})

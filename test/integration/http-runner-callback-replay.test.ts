import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AppInstance, startAppInstance } from '../support/app-instance.ts'
import { type SignedMessage, signedExitCallback } from '../support/signed-callback.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * A captured signed runner callback is refused (401) everywhere once accepted: by another
 * instance on the same coordinator and by an instance started after a restart, for as long as
 * the signature's window lasts. The replay guard lives in the coordinator (Upstash on
 * redis-server), keyed by the message id (`webhook-id`).
 */
const SECRET = 'runner-secret-0123456789abcdef'
let backends: TestBackends
let env: Record<string, string>
const instances: AppInstance[] = []

beforeAll(async () => {
  backends = await startTestBackends('replay')
  // A runner that is never called here: the callback route only needs its secret.
  env = backends.env({ TURNLINE_RUNNER_URL: 'http://127.0.0.1:9', TURNLINE_RUNNER_SECRET: SECRET })
})
afterAll(async () => {
  for (const instance of instances) await instance.close()
  await backends?.close()
})

async function instance(): Promise<AppInstance> {
  const started = await startAppInstance(env)
  instances.push(started)
  return started
}

/** A callback signed like the runner signs it (test/support/signed-callback.ts). */
const signedCallback = (sessionId: string) => signedExitCallback(SECRET, sessionId)

const deliver = (to: AppInstance, message: SignedMessage) =>
  fetch(`${to.url}/v1/runner/callback`, { method: 'POST', ...message })

async function newSession(on: AppInstance): Promise<string> {
  const res = await fetch(`${on.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

describe('runner callback replay guard', () => {
  it('refuses a replay on another instance and after a restart', async () => {
    const a = await instance()
    const b = await instance()
    const sessionId = await newSession(a)
    const captured = signedCallback(sessionId)

    const first = await deliver(a, captured)
    expect(first.status).toBe(202)
    expect(await first.json()).toEqual({ resumed: false })

    const onOther = await deliver(b, captured)
    expect(onOther.status).toBe(401)
    expect(await onOther.json()).toMatchObject({
      error: { code: 'unauthorized', details: { reason: 'replayed' } },
    })
    expect((await deliver(a, captured)).status).toBe(401)

    // A restart: a new process with nothing in memory, on the same coordinator.
    await a.close()
    const restarted = await instance()
    expect((await deliver(restarted, captured)).status).toBe(401)

    // A new message (a new id) for the same session is accepted once.
    const fresh = signedCallback(sessionId)
    expect((await deliver(restarted, fresh)).status).toBe(202)
    expect((await deliver(b, fresh)).status).toBe(401)
  })

  it('checks the signature before remembering anything', async () => {
    const a = await instance()
    const sessionId = await newSession(a)
    const message = signedCallback(sessionId)
    const forged = {
      ...message,
      headers: {
        ...message.headers,
        'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
      },
    }
    const refused = await deliver(a, forged)
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ error: { details: { reason: 'bad_signature' } } })
    // The forged copy did not use up the genuine message's id.
    expect((await deliver(a, message)).status).toBe(202)
  })
})

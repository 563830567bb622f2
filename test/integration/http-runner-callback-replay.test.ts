import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AppInstance, deploymentEnv, startAppInstance } from '../support/app-instance.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * A captured signed runner callback is refused (401) everywhere once accepted: by another
 * instance on the same coordinator and by an instance started after a restart, for as long as
 * the signature's window lasts. The replay guard lives in the coordinator (Upstash on
 * redis-server), keyed by the message id (`webhook-id`).
 */
const services = requireServices()
const SECRET = 'runner-secret-0123456789abcdef'
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let proxy: UpstashProxy
let mock: MockOpenAI
let env: Record<string, string>
const instances: AppInstance[] = []

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'replay')
  proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
  mock = await startMockOpenAI()
  env = deploymentEnv({
    s3: services.s3,
    bucket: bucket.bucket,
    upstash: proxy,
    modelBaseURL: mock.baseURL,
    // A runner that is never called here: the callback route only needs its secret.
    extra: { TURNLINE_RUNNER_URL: 'http://127.0.0.1:9', TURNLINE_RUNNER_SECRET: SECRET },
  })
})
afterAll(async () => {
  for (const instance of instances) await instance.close()
  await mock?.close()
  await proxy?.close()
  await bucket?.destroy()
})

async function instance(): Promise<AppInstance> {
  const started = await startAppInstance(env)
  instances.push(started)
  return started
}

/**
 * A callback signed like the runner signs it (Standard Webhooks: base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>", keyed with the secret's UTF-8 bytes), computed here with node:crypto.
 */
function signedCallback(sessionId: string, id = `msg_${randomBytes(16).toString('hex')}`) {
  const body = JSON.stringify({
    type: 'exec.exited',
    nonce: randomBytes(16).toString('hex'),
    tenant: 'local',
    session_id: sessionId,
    exec_session_id: 'run-0123456789abcdef01234567',
    request_id: `req_${randomBytes(8).toString('hex')}`,
    tool_call_id: 'call_1',
    exit_code: 0,
    total_output_bytes: 0,
    spool_path: '.vtcode/context/tool_outputs/x.txt',
    spool_complete: true,
    exited_at: Date.now(),
    attempt: 1,
  })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', SECRET)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
    },
  }
}

const deliver = (to: AppInstance, message: ReturnType<typeof signedCallback>) =>
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

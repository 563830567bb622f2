import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * One tenant's callback receiver that never answers does not hold back another tenant's
 * notices. `npm start` on S3 + Upstash with two keys: the noisy tenant ends a few sessions whose
 * callback URL takes every delivery and answers none (each attempt ends at its deadline); the
 * quiet tenant's notice, recorded while those attempts run, reaches its receiver before the
 * noisy tenant's have all been tried. The noisy tenant's markers list first in the outbox.
 */
const NOISY_KEY = 'callback-lanes-noisy-0123456789'
const QUIET_KEY = 'callback-lanes-quiet-0123456789'
const TOOL_SECRET = 'callback-lanes-deployment-secret'
const NOISY_SESSIONS = 6
let backends: TestBackends
let server: NodeEntry
let url = ''
let sink: Awaited<ReturnType<typeof startHookReceiver>>
let receiver: Awaited<ReturnType<typeof startHookReceiver>>

beforeAll(async () => {
  backends = await startTestBackends('cb-lanes')
  sink = await startHookReceiver(await deriveTenantSecret(TOOL_SECRET, 'noisy'))
  sink.setReply(() => ({ hold: new Promise<never>(() => {}) }))
  receiver = await startHookReceiver(await deriveTenantSecret(TOOL_SECRET, 'quiet'))
  server = startNodeEntry(
    backends.env({
      PORT: '0',
      TURNLINE_API_KEYS: `${NOISY_KEY}=noisy,${QUIET_KEY}=quiet`,
      TURNLINE_TOOL_SECRET: TOOL_SECRET,
      TURNLINE_CALLBACK_ALLOW_HTTP: '1',
      TURNLINE_EGRESS_ALLOW: `${sink.host},${receiver.host}`,
      TURNLINE_CALLBACK_TIMEOUT_MS: '1500',
      // Only first attempts within the test.
      TURNLINE_CALLBACK_RETRY_FIRST_MS: '600000',
      TURNLINE_CALLBACK_SWEEP_MS: '600000',
    }),
  )
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await sink?.close()
  await receiver?.close()
  await backends?.close()
})

async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  expect(res.status, text).toBeLessThan(300)
  return JSON.parse(text) as Record<string, unknown>
}

async function endedSession(key: string, callbackUrl: string): Promise<string> {
  const created = await call(key, 'POST', '/v1/sessions', { callback: { url: callbackUrl } })
  const id = created.session_id as string
  await call(key, 'POST', `/v1/sessions/${id}/complete`, {})
  return id
}

describe('callback delivery across tenants', () => {
  it("delivers a tenant's notice while another tenant's receiver holds every attempt", async () => {
    for (let i = 0; i < NOISY_SESSIONS; i++) await endedSession(NOISY_KEY, sink.url('/hook'))
    await until('the noisy tenant has attempts under way', () =>
      sink.received.length > 0 ? true : undefined,
    )
    const quiet = await endedSession(QUIET_KEY, receiver.url('/hook'))
    await until(
      "the quiet tenant's notice",
      () =>
        receiver.received.some(
          (hook) => (hook.body.data as { session_id?: string })?.session_id === quiet,
        )
          ? true
          : undefined,
      30_000,
    )
    // The noisy tenant's notices (one per session: thread.completed) are not all tried yet.
    expect(sink.received.length).toBeLessThan(NOISY_SESSIONS)
  }, 60_000)
})

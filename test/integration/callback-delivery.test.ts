import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { eventually, listDeliveries } from '../support/callback-polling.ts'
import { startTestDns, type TestDns } from '../support/dns-server.ts'
import { type HookReply, type ReceivedHook, startHookReceiver } from '../support/hook-receiver.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { refusedCallbackDestinations } from '../support/refused-destinations.ts'

/**
 * Completion callbacks on `npm start` (multi-tenant: API keys), delivered to a real receiver:
 * a receiver that drops the connection, then does not answer in time, then answers 500 before
 * it accepts gets exactly one accepted delivery per event, every attempt with the same
 * `webhook-id` and a signature that verifies; a server killed with a delivery pending leaves it
 * to the next one; destinations the egress rules refuse (loopback, cloud metadata, private
 * networks, a name that resolves to loopback) are never called and the refusal is recorded.
 */
const KEY = 'acme-callback-key-0123456789abcdef'
const TOOL_SECRET = 'callback-test-deployment-secret'
let dir: string
let mock: MockOpenAI
let dns: TestDns
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
let other: Awaited<ReturnType<typeof startHookReceiver>>
let server: NodeEntry | undefined
let url = ''

async function start(): Promise<void> {
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_CALLBACK_ALLOW_HTTP: '1',
    // The receiver is the one loopback address deliveries may reach; the rest stays refused.
    TURNLINE_EGRESS_ALLOW: receiver.host,
    TURNLINE_EGRESS_DNS: dns.address,
    TURNLINE_CALLBACK_TIMEOUT_MS: '500',
    TURNLINE_CALLBACK_RETRY_FIRST_MS: '50',
    TURNLINE_CALLBACK_RETRY_MAX_MS: '200',
    TURNLINE_CALLBACK_SWEEP_MS: '200',
  })
  url = await server.listening()
}

/** A crash: SIGKILL to the server's process group, nothing flushed or closed. */
async function kill(): Promise<void> {
  await server?.crash()
  server = undefined
}

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, json: () => JSON.parse(text) as Record<string, unknown> }
}

/** Through the typed client, which validates the answer with the contract's schema. */
const deliveries = (session: string) => listDeliveries(url, KEY, session)

async function sessionWithCallback(callbackUrl: string): Promise<string> {
  const created = await call('POST', '/v1/sessions', { callback: { url: callbackUrl } })
  expect(created.status).toBe(201)
  return created.json().session_id as string
}

/** An answer held forever: the attempt's deadline passes first. */
const NEVER = new Promise<never>(() => {})

/** What the receiver answered, per webhook-id, in order. */
const answered = new Map<string, number[]>()
const idOf = (hook: ReceivedHook) => String(hook.headers['webhook-id'])
const hooksOf = (session: string, list = receiver.received) =>
  list.filter((hook) => (hook.body.data as { session_id?: string })?.session_id === session)

function scripted(replies: (n: number) => HookReply): (hook: ReceivedHook) => HookReply {
  return (hook) => {
    const id = idOf(hook)
    const seen = answered.get(id) ?? []
    const reply = replies(seen.length)
    // 0: no answer (dropped, or too late for the attempt's deadline)
    seen.push(reply.destroy || reply.hold ? 0 : (reply.status ?? 200))
    answered.set(id, seen)
    return reply
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-callbacks-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  const secret = await deriveTenantSecret(TOOL_SECRET, 'acme')
  receiver = await startHookReceiver(secret)
  other = await startHookReceiver(secret)
  dns = await startTestDns({ 'rebound.example': ['127.0.0.1'] })
  await start()
})

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  await receiver?.close()
  await other?.close()
  await dns?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('completion callbacks on npm start', () => {
  it('delivers each event once to a receiver that fails, times out and answers 500 first', async () => {
    receiver.setReply(
      scripted((n) =>
        n === 0 ? { destroy: true } : n === 1 ? { hold: NEVER } : n === 2 ? { status: 500 } : {},
      ),
    )
    const session = await sessionWithCallback(receiver.url('/hooks/acme'))
    mock.enqueue({ text: 'the answer is 42' })
    const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'compute' })
    expect(turn.json().status).toBe('completed')
    expect((await call('POST', `/v1/sessions/${session}/complete`)).status).toBe(200)

    const done = await eventually('both notices delivered', async () => {
      const list = await deliveries(session)
      return list.length === 2 && list.every((d) => d.state === 'delivered') ? list : undefined
    })
    expect(done.map((d) => d.type)).toEqual(['turn.completed', 'thread.completed'])
    const [completed, ended] = done
    expect(completed?.notice.data).toMatchObject({
      session_id: session,
      status: 'completed',
      result: 'the answer is 42',
      events_url: `/v1/sessions/${session}/events`,
    })
    expect(completed?.notice.data.usage?.output_tokens).toBeGreaterThan(0)
    expect(ended?.notice.data).toMatchObject({ status: 'terminal', subtype: 'success' })
    for (const delivery of done) {
      const attempts = delivery.attempts
      expect(attempts).toHaveLength(4)
      expect(attempts[0]?.error).toMatch(/connection/)
      expect(attempts[1]?.error).toBe('no answer within 500 ms')
      expect(attempts.slice(2).map((a) => a.status_code)).toEqual([500, 200])
      // exactly one accepted attempt, every attempt with the same id, body and a good signature
      const hooks = receiver.received.filter((hook) => idOf(hook) === delivery.id)
      expect(hooks).toHaveLength(4)
      expect(answered.get(delivery.id)?.filter((status) => status === 200)).toHaveLength(1)
      expect(hooks.every((hook) => hook.signatureValid)).toBe(true)
      expect(new Set(hooks.map((hook) => hook.raw)).size).toBe(1)
      expect(JSON.parse(hooks[0]?.raw ?? '')).toEqual(delivery.notice)
    }
    expect(new Set(hooksOf(session).map(idOf)).size).toBe(2)
    // The operator log's lines of these attempts: JSON with ts, level and msg, as every line.
    const attemptLines = (server?.output() ?? '')
      .split('\n')
      .filter((line) => line.includes('"msg":"callback attempt"'))
      .map((line) => JSON.parse(line) as { ts?: string; level?: string; msg?: string })
    expect(attemptLines.length).toBeGreaterThanOrEqual(8)
    for (const line of attemptLines) {
      expect(line).toMatchObject({ level: 'info', msg: 'callback attempt' })
      expect(Date.parse(line.ts ?? '')).not.toBeNaN()
    }
  })

  it('leaves a pending delivery of a killed server to the next one, with the same id', async () => {
    let accepting = false
    receiver.setReply(scripted(() => (accepting ? {} : { status: 503 })))
    const session = await sessionWithCallback(receiver.url('/hooks/kill'))
    mock.enqueue({ text: 'before the crash' })
    expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' })).status).toBe(200)
    const id = await eventually('a refused attempt', async () => {
      const first = hooksOf(session)[0]
      return first ? idOf(first) : undefined
    })
    expect(id).toMatch(/^msg_/)
    await kill()
    accepting = true
    const before = hooksOf(session).length
    await start()
    const [delivered] = await eventually('the delivery after the restart', async () => {
      const list = await deliveries(session)
      return list[0]?.state === 'delivered' ? list : undefined
    })
    expect(delivered?.id).toBe(id)
    expect(delivered?.attempts.at(-1)?.status_code).toBe(200)
    expect(hooksOf(session).length).toBeGreaterThan(before)
    expect(hooksOf(session).every((hook) => idOf(hook) === id && hook.signatureValid)).toBe(true)
    expect(answered.get(id)?.filter((status) => status === 200)).toHaveLength(1)
  })

  it('refuses loopback, link-local, private and rebinding destinations, and says why', async () => {
    other.setReply(() => ({}))
    const port = Number(other.host.split(':')[1])
    const targets = refusedCallbackDestinations(port)
    const sessions: [string, RegExp][] = []
    for (const [target, reason] of Object.entries(targets)) {
      const session = await sessionWithCallback(target)
      mock.enqueue({ text: 'refused destination' })
      expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'x' })).status).toBe(200)
      sessions.push([session, reason])
    }
    for (const [session, reason] of sessions) {
      const [failed] = await eventually(`the refusal of ${session}`, async () => {
        const list = await deliveries(session)
        return list[0]?.state === 'failed' ? list : undefined
      })
      expect(failed?.reason).toMatch(/^refused: /)
      expect(failed?.reason).toMatch(reason)
      expect(failed?.attempts).toHaveLength(1)
      expect(failed?.attempts[0]?.error).toBe(failed?.reason)
    }
    expect(other.received).toHaveLength(0)
  })
})

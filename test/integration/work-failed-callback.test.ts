import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { eventually, listDeliveries } from '../support/callback-polling.ts'
import { type ReceivedHook, startHookReceiver } from '../support/hook-receiver.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { signMessage } from '../support/signed-callback.ts'

/**
 * `work.failed` on `npm start` (multi-tenant, the fs store, its own worker): a background turn
 * and a webhook run accepted (202) while the tenant's daily quota is used up wait for it until
 * their maximum age, then fail — and each sends one signed `work.failed` notice to its session's
 * callback URL, visible in `GET …/deliveries`. A server killed while the receiver still refuses
 * the notice leaves it to the next server, which delivers it with the same `webhook-id`: one
 * accepted delivery per work. Before that: a session that names no callback reports to its
 * tenant's default (`TURNLINE_CALLBACK_URLS`), here a turn left waiting for a plan's approval.
 */
const KEY = 'acme-work-failed-key-0123456789abcdef'
const PLAN = 'Intro.\n<proposed_plan>\n1. Read the code\n2. Fix the bug\n</proposed_plan>'
const TOOL_SECRET = 'work-failed-deployment-secret'
const HOOK_SECRET = `whsec_${Buffer.from('work-failed-hook-secret-0123456789').toString('base64')}`
let dir: string
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
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
    TURNLINE_LIMIT_TOKENS_PER_DAY: '150',
    // Refused work is tried again every 100 ms and gives up 3 s after its 202.
    TURNLINE_WORK_QUOTA_RETRY_MS: '100',
    TURNLINE_WORK_MAX_AGE_MS: '3000',
    TURNLINE_WORK_SWEEP_MS: '250',
    TURNLINE_WEBHOOKS: JSON.stringify({
      triage: {
        secret: HOOK_SECRET,
        tenant: 'acme',
        prompt: 'New issue event: {{body}}',
        session: { callback: { url: receiver.url('/hooks/webhook') } },
      },
    }),
    TURNLINE_CALLBACK_ALLOW_HTTP: '1',
    // The tenant's default, for sessions that name no callback.
    TURNLINE_CALLBACK_URLS: JSON.stringify({ acme: receiver.url('/hooks/default') }),
    TURNLINE_EGRESS_ALLOW: receiver.host,
    TURNLINE_CALLBACK_TIMEOUT_MS: '2000',
    TURNLINE_CALLBACK_RETRY_FIRST_MS: '50',
    TURNLINE_CALLBACK_RETRY_MAX_MS: '200',
    TURNLINE_CALLBACK_SWEEP_MS: '200',
    // No embedded runner (it would need the command sandbox): nothing here runs a command.
    TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
    TURNLINE_RUNNER_SECRET: 'work-failed-runner-secret',
  })
  url = await server.listening()
}

async function call(method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return {
    status: response.status,
    text,
    json: () => JSON.parse(text) as Record<string, unknown>,
  }
}

/** Through the typed client, which validates the answer with the contract's schema. */
const deliveries = (session: string) => listDeliveries(url, KEY, session)

const idOf = (hook: ReceivedHook) => String(hook.headers['webhook-id'])
const dataOf = (hook: ReceivedHook) => hook.body.data as Record<string, unknown>
/** Accepted (200) deliveries, per webhook-id. */
const accepted = new Map<string, number>()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-work-failed-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  receiver = await startHookReceiver(await deriveTenantSecret(TOOL_SECRET, 'acme'))
  await start()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  await receiver?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('work.failed on npm start', { timeout: 180_000 }, () => {
  // First: it spends 15 of the 150 tokens; the next test spends the rest.
  it("reports to the tenant's default URL a session that names none, and a turn waiting on a person", async () => {
    receiver.setReply(() => ({}))
    const created = await call('POST', '/v1/sessions', { permissions: { mode: 'plan' } })
    expect(created.status, created.text).toBe(201)
    const session = created.json().session_id as string
    mock.enqueue({ text: PLAN, usage: { input_tokens: 10, output_tokens: 5 } })
    const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'plan it' })
    expect(turn.json().status).toBe('awaiting_approval')
    const [waiting] = await eventually('the turn.waiting delivery', async () => {
      const list = await deliveries(session)
      return list[0]?.state === 'delivered' ? list : undefined
    })
    expect(waiting).toMatchObject({
      type: 'turn.waiting',
      url: receiver.url('/hooks/default'),
      notice: {
        data: { session_id: session, status: 'awaiting_approval', waiting_for: 'plan_approval' },
      },
    })
    const hooks = receiver.received.filter((h) => dataOf(h).session_id === session)
    expect(hooks.map((h) => [h.path, h.body.type, idOf(h), h.signatureValid])).toEqual([
      ['/hooks/default', 'turn.waiting', waiting?.id, true],
    ])
  })

  it('reports background work that expired waiting for the quota, once, across a crash', async () => {
    let accepting = false
    receiver.setReply((hook) => {
      if (hook.body.type !== 'work.failed') return {}
      if (!accepting) return { status: 503 }
      accepted.set(idOf(hook), (accepted.get(idOf(hook)) ?? 0) + 1)
      return {}
    })
    const created = await call('POST', '/v1/sessions', {
      callback: { url: receiver.url('/hooks/turns') },
    })
    expect(created.status, created.text).toBe(201)
    const session = created.json().session_id as string
    mock.enqueue({ text: 'the quota is spent', usage: { input_tokens: 100, output_tokens: 50 } })
    expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' })).status).toBe(200)
    const modelCalls = mock.requests.length
    // From here a model request fails the test: the quota is used up and nothing is queued.
    const turn = await call(
      'POST',
      `/v1/sessions/${session}/turns`,
      { input: 'more' },
      { prefer: 'respond-async', 'idempotency-key': 'work-failed-turn' },
    )
    expect(turn.status, turn.text).toBe(202)
    const workId = turn.json().work_id as string
    const body = JSON.stringify({ action: 'opened', title: 'Crash' })
    const hook = await fetch(`${url}/v1/webhooks/triage`, {
      method: 'POST',
      ...signMessage(HOOK_SECRET, body, 'msg_work_failed_1'),
    })
    const hookText = await hook.text()
    expect(hook.status, hookText).toBe(202)
    const hookSession = (JSON.parse(hookText) as { session_id: string }).session_id

    // The turn's notice is refused by the receiver until after a crash of the server.
    const first = await eventually('a refused work.failed attempt', async () =>
      receiver.received.find((h) => h.body.type === 'work.failed' && h.path === '/hooks/turns'),
    )
    expect(dataOf(first)).toMatchObject({ session_id: session, status: 'failed' })
    await server?.crash()
    server = undefined
    accepting = true
    await start()

    const status = await call('GET', `/v1/sessions/${session}/work/${workId}`)
    expect(status.json()).toMatchObject({ state: 'failed', error: { code: 'quota_exceeded' } })
    for (const [id, path] of [
      [session, '/hooks/turns'],
      [hookSession, '/hooks/webhook'],
    ] as const) {
      const [delivered] = await eventually(`the work.failed of ${id}`, async () => {
        const list = await deliveries(id)
        return list.some((d) => d.type === 'work.failed' && d.state === 'delivered')
          ? list.filter((d) => d.type === 'work.failed')
          : undefined
      })
      expect(delivered?.notice).toMatchObject({
        type: 'work.failed',
        data: {
          session_id: id,
          status: 'failed',
          work: {
            source: id === session ? 'turns' : 'webhook',
            code: 'quota_exceeded',
            message: expect.stringMatching(/^expired: .*maximum age/),
          },
        },
      })
      const hooks = receiver.received.filter(
        (h) => h.path === path && h.body.type === 'work.failed',
      )
      expect(hooks.length).toBeGreaterThan(0)
      expect(hooks.every((h) => idOf(h) === delivered?.id && h.signatureValid)).toBe(true)
      expect(new Set(hooks.map((h) => h.raw)).size).toBe(1)
      expect(accepted.get(delivered?.id ?? '')).toBe(1)
    }
    expect(receiver.received.filter((h) => h.path === '/hooks/turns').length).toBeGreaterThan(1)
    // The turn work's notice names its work id; nothing else ran.
    const turnNotice = (await deliveries(session)).find((d) => d.type === 'work.failed')
    expect(turnNotice).toMatchObject({
      work_id: workId,
      notice: { data: { work: { work_id: workId } } },
    })
    expect(mock.requests).toHaveLength(modelCalls)
  })
})

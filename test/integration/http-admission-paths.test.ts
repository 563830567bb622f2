import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KeyDirectory } from '../../functions/tenancy/key-directory.ts'
import { updateKeyRegistry } from '../../functions/tenancy/key-registry.ts'
import type { TenantLimits } from '../../src/contract/tenancy.ts'
import { echoTool } from '../support/engine-harness.ts'
import { signMessage } from '../support/signed-callback.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * Every route that steps a turn or may call a model is admitted by the same gate: over the
 * tenant's daily token quota, or with its turn slots taken, each answers 429 before the model is
 * asked (the mock model fails the test on any request) and before anything is written, so the
 * same call succeeds once the limits allow. Real HTTP on S3 + Upstash (the limiter in
 * redis-server).
 */
const run = crypto.randomUUID().slice(0, 8)
const KEY = `paths-key-${run}-0123456789`
const TENANT = `paths-${run}`
const PAUSE_KEY = `pause-key-${run}-0123456789`
const PAUSE_TENANT = `pause-${run}`
const HOOK_SECRET = Buffer.from('admission-webhook-secret-0123')
const PLAN = 'Intro.\n<proposed_plan>\n1. Read the code\n2. Fix the bug\n</proposed_plan>'
let deployment: TestDeployment

beforeAll(async () => {
  deployment = await startTestDeployment('admission-paths', {
    TURNLINE_API_KEYS: `${KEY}=${TENANT},${PAUSE_KEY}=${PAUSE_TENANT}`,
    TURNLINE_KEY_REGISTRY: '1',
    TURNLINE_TOOL_ALLOWED_HOSTS: '127.0.0.1:9',
    TURNLINE_WEBHOOKS: JSON.stringify({
      triage: {
        secret: `whsec_${HOOK_SECRET.toString('base64')}`,
        tenant: TENANT,
        prompt: 'Triage: {{body}}',
      },
    }),
    TURNLINE_LOG: 'off',
  })
})
afterAll(() => deployment?.close())

/** Sets the tenant's limits in the key registry and has the app read them. */
async function limit(limits: TenantLimits, tenant = TENANT): Promise<void> {
  await updateKeyRegistry(deployment.app.deps.service.sessions.objects, (registry) => ({
    ...registry,
    tenants: { ...registry.tenants, [tenant]: { limits } },
  }))
  // Configured keys never make the app look at the registry: read it now.
  await (deployment.app.deps.auth.registry as KeyDirectory).reload()
}

const post = (path: string, body: unknown = {}, key = KEY) =>
  fetch(`${deployment.app.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

async function session(config: object = {}, key = KEY): Promise<string> {
  const res = await post('/v1/sessions', config, key)
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

interface TurnAnswer {
  status: string
  warnings?: string[]
  events: { type: string; item?: { type: string; text?: string } }[]
}

async function turn(id: string, input?: string, key = KEY): Promise<TurnAnswer> {
  const res = await post(`/v1/sessions/${id}/turns`, input === undefined ? {} : { input }, key)
  const body = (await res.json()) as TurnAnswer
  expect(res.status, JSON.stringify(body)).toBe(200)
  return body
}

/** A delivery to the `triage` hook, signed as a Standard Webhooks sender signs it. */
function delivery(id: string) {
  const signed = signMessage(`whsec_${HOOK_SECRET.toString('base64')}`, '{"issue":7}', id)
  return fetch(`${deployment.app.url}/v1/webhooks/triage`, { method: 'POST', ...signed })
}

describe('every turn-stepping route is admitted', () => {
  it('over the quota or the turn slots: 429 before any model call, nothing lost', async () => {
    const { mock } = deployment
    const usage = { input_tokens: 10, output_tokens: 5 }
    // While the tenant is unlimited: a turn waiting for a permission, a plan waiting for
    // approval, an ordinary session with history, a loop.
    mock.reset()
    const lookup = { id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }
    mock.enqueue({ toolCalls: [lookup], usage }, { text: PLAN, usage }, { text: 'hello', usage })
    const permission = await session({
      tools: [echoTool('http://127.0.0.1:9/lookup')],
      permissions: { mode: 'default' },
    })
    expect((await turn(permission, 'look it up')).status).toBe('awaiting_approval')
    const plan = await session({ permissions: { mode: 'plan' } })
    expect((await turn(plan, 'plan the fix')).status).toBe('awaiting_approval')
    const plain = await session()
    expect((await turn(plain, 'hi')).status).toBe('completed')
    const loop = await post('/v1/loops', { task: 'tidy up' })
    expect(loop.status).toBe(201)
    const { loop_id } = (await loop.json()) as { loop_id: string }
    mock.assertDone()

    // 45 tokens used today; a limit of 45: from here on any model request fails the test.
    await limit({ tokens_per_day: 45 })
    mock.reset()
    const hookId = `msg_${run}`
    const refused: [string, () => Promise<Response>][] = [
      ['turn', () => post(`/v1/sessions/${plain}/turns`, { input: 'again' })],
      ['permission', () => post(`/v1/sessions/${permission}/permissions`, allowLookup)],
      ['plan approval', () => post(`/v1/sessions/${plan}/plan-approval`, { decision: 'execute' })],
      ['compaction', () => post(`/v1/sessions/${plain}/compact`)],
      ['fork', () => post(`/v1/sessions/${plain}/fork`)],
      ['verify', () => post(`/v1/sessions/${plain}/verify`, { paths: ['a.txt'] })],
      ['exec', () => post('/v1/exec', { prompt: 'hi' })],
      ['responses', () => post('/v1/responses', { input: 'hi' })],
      ['loop step', () => post(`/v1/loops/${loop_id}/step`)],
      ['webhook run', () => delivery(hookId)],
    ]
    await expectRefused(refused, {
      code: 'quota_exceeded',
      details: { quota: 'tokens', limit: 45, used: 45 },
    })
    expect(mock.requests).toHaveLength(0)
    mock.assertDone()

    // One turn slot, held by a turn whose model call waits: every other step is refused.
    await limit({ tokens_per_day: 10_000, concurrent_turns: 1 })
    let unblock = () => {}
    const blocked = new Promise<void>((resolve) => {
      unblock = resolve
    })
    mock.respond(async () => {
      await blocked
      return { text: 'held', usage }
    })
    const holder = post(`/v1/sessions/${await session()}/turns`, { input: 'hold the slot' })
    await until('the held turn', () => (mock.requests.length === 1 ? true : undefined))
    await expectRefused(refused, {
      code: 'too_many_concurrent_turns',
      details: { limit: 1, active: 1 },
    })
    expect(mock.requests).toHaveLength(1)
    unblock()
    expect((await holder).status).toBe(200)
    mock.reset()

    // Nothing was lost: with room again, the same calls go through (one model call each).
    mock.enqueue({ text: 'built it', usage }, { text: 'triaged', usage })
    const decided = await post(`/v1/sessions/${permission}/permissions`, allowLookup)
    expect(decided.status).toBe(200)
    const approved = await post(`/v1/sessions/${plan}/plan-approval`, { decision: 'execute' })
    expect(approved.status, await approved.clone().text()).toBe(200)
    expect(await approved.json()).toMatchObject({ status: 'completed' })
    const hook = await delivery(hookId)
    expect(hook.status, await hook.clone().text()).toBe(200)
    expect(await hook.json()).toMatchObject({ duplicate: true, turn: { status: 'terminal' } })
    mock.assertDone()
  })

  it('a model call refused after the turn ran a tool keeps the work: the turn waits', async () => {
    const { mock } = deployment
    const usage = { input_tokens: 10, output_tokens: 5 }
    await limit({ tokens_per_day: 15 }, PAUSE_TENANT)
    mock.reset()
    // The turn's first call (15 tokens) asks for a tool; its second is refused: any request
    // beyond this one fails the test.
    mock.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }], usage })
    const id = await session(
      { tools: [echoTool('http://127.0.0.1:9/lookup')], permissions: { mode: 'auto' } },
      PAUSE_KEY,
    )
    const paused = await turn(id, 'look it up', PAUSE_KEY)
    expect(paused.status).toBe('waiting')
    expect(paused.warnings?.join('\n')).toMatch(/paused: the daily tokens quota .* used up/)
    expect(paused.events.map((e) => e.item?.type)).toContain('tool_output')
    expect(paused.events.map((e) => e.type)).not.toContain('turn.completed')
    mock.assertDone()

    // Once the quota allows, a turn without input continues it: the model sees the tool's
    // output, which was not run again.
    await limit({ tokens_per_day: 1_000 }, PAUSE_TENANT)
    mock.enqueue({ text: 'looked it up', usage })
    const continued = await turn(id, undefined, PAUSE_KEY)
    expect(continued.status).toBe('completed')
    expect(continued.events.map((e) => e.item?.text)).toContain('looked it up')
    const sent = mock.requests[1]?.body.messages as { role: string }[]
    expect(sent.map((m) => m.role)).toContain('tool')
    mock.assertDone()
  })
})

const allowLookup = { tool_name: 'lookup', decision: 'allow' }

/** Each call answers 429 with `error` and a Retry-After. */
async function expectRefused(
  calls: [string, () => Promise<Response>][],
  error: { code: string; details: object },
): Promise<void> {
  for (const [name, send] of calls) {
    const res = await send()
    const text = await res.text()
    expect(res.status, `${name}: ${text}`).toBe(429)
    expect(JSON.parse(text), name).toMatchObject({ error })
    expect(Number(res.headers.get('retry-after')), name).toBeGreaterThan(0)
  }
}

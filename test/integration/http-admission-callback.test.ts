import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { KeyDirectory } from '../../functions/tenancy/key-directory.ts'
import { updateKeyRegistry } from '../../functions/tenancy/key-registry.ts'
import type { TenantLimits, UsageReport } from '../../src/contract/tenancy.ts'
import type { AppInstance } from '../support/app-instance.ts'
import { startAppInstance } from '../support/app-instance.ts'
import { type CallbackRelay, startCallbackRelay } from '../support/callback-relay.ts'
import type { MockRequest, MockStep } from '../support/mock-openai.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * A turn resumed by the runner's exit callback is admitted like any turn step (issue: the
 * callback used to continue it outside the tenant's limits). Real parts throughout: the
 * reference runner as a process, its signed callbacks through a relay to the app, the app on S3
 * and Upstash (the limiter in redis-server), the mock OpenAI server. A refused callback answers
 * 429 and the turn keeps waiting: the runner's redelivery, or the tenant's next turn without
 * input, continues it later.
 */
const run = crypto.randomUUID().slice(0, 8)
const SECRET = 'admission-runner-secret-0123456789'
const KEYS = { slots: `slots-key-${run}-0123456789`, quota: `quota-key-${run}-0123456789` }
const tenantOf = (name: keyof typeof KEYS) => `${name}-${run}`
const COMMAND = 'while [ ! -e release ]; do sleep 0.1; done; echo released'

let backends: TestBackends
let relay: CallbackRelay
let runner: RunnerProcess
let root = ''
let app: AppInstance

beforeAll(async () => {
  backends = await startTestBackends('admission-callback')
  relay = await startCallbackRelay()
  root = await mkdtemp(join(tmpdir(), 'turnline-admission-runner-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(root, 0o711)
  runner = await startRunnerProcess({ root, secret: SECRET, callbackUrl: relay.url })
  app = await startAppInstance(
    backends.env({
      TURNLINE_API_KEYS: Object.entries(KEYS)
        .map(([name, key]) => `${key}=${tenantOf(name as keyof typeof KEYS)}`)
        .join(','),
      TURNLINE_KEY_REGISTRY: '1',
      TURNLINE_KEY_RELOAD_SECONDS: '1',
      TURNLINE_RUNNER_URL: runner.url,
      TURNLINE_RUNNER_SECRET: SECRET,
      TURNLINE_TOOL_SECRET: 'admission-tool-secret-0123456789',
      // A command wait beyond 1 s ends the invocation: the turn answers `waiting`.
      TURNLINE_INVOCATION_BUDGET_MS: '1000',
      TURNLINE_LOG: 'off',
    }),
  )
  relay.target = app.url
}, 120_000)

afterAll(async () => {
  await app?.close()
  await runner?.stop()
  await relay?.close()
  await backends?.close()
  if (root) await rm(root, { recursive: true, force: true })
})

beforeEach(() => {
  backends.mock.reset()
  relay.target = app.url
})

/** Sets a tenant's limits in the key registry and has the app read them. */
async function limit(name: keyof typeof KEYS, limits: TenantLimits): Promise<void> {
  await updateKeyRegistry(app.deps.service.sessions.objects, (registry) => ({
    ...registry,
    tenants: { ...registry.tenants, [tenantOf(name)]: { limits } },
  }))
  // The keys here are configured ones, which never make the app look at the registry.
  await (app.deps.auth.registry as KeyDirectory).reload()
}

function call(name: keyof typeof KEYS, path: string, body?: unknown) {
  return fetch(`${app.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${KEYS[name]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

async function session(name: keyof typeof KEYS): Promise<string> {
  const res = await call(name, '/v1/sessions', {})
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

interface Turn {
  status: string
  events: {
    type: string
    item?: { tool_name?: string; arguments?: { session_id?: string }; text?: string }
  }[]
}

/** A turn that starts the command and ends `waiting` on it; answers the runner's exec id. */
async function waitingTurn(name: keyof typeof KEYS, id: string): Promise<string> {
  const res = await call(name, `/v1/sessions/${id}/turns`, { input: 'run the command' })
  const answer = (await res.json()) as Turn
  expect(res.status, JSON.stringify(answer)).toBe(200)
  expect(answer.status).toBe('waiting')
  const wait = answer.events.map((e) => e.item).findLast((i) => i?.tool_name === 'write_stdin')
  const exec = wait?.arguments?.session_id
  expect(exec).toMatch(/^run-/)
  return exec as string
}

/** The model: run the command, wait for it, then report; `other` answers any other prompt. */
function agent(other?: () => Promise<MockStep>) {
  return async (request: MockRequest): Promise<MockStep> => {
    const messages = request.body.messages as { role: string; content: string }[]
    const usage = { input_tokens: 10, output_tokens: 5 }
    if (other && messages.find((m) => m.role === 'user')?.content !== 'run the command') {
      return { ...(await other()), usage }
    }
    const last = messages.at(-1)
    if (last?.role === 'user') {
      const args = { cmd: COMMAND, yield_time_ms: 250 }
      return {
        toolCalls: [{ id: 'c1', name: 'exec_command', arguments: JSON.stringify(args) }],
        usage,
      }
    }
    const result = JSON.parse(last?.content ?? '{}') as { session_id?: string; is_exited?: boolean }
    if (result.is_exited === false) {
      const args = { session_id: result.session_id, action: 'wait', wait_timeout_seconds: 30 }
      return {
        toolCalls: [{ id: 'c2', name: 'write_stdin', arguments: JSON.stringify(args) }],
        usage,
      }
    }
    return { text: `reported: ${last?.content.includes('released') ? 'released' : '?'}`, usage }
  }
}

const release = (name: keyof typeof KEYS, id: string) =>
  writeFile(join(root, tenantOf(name), id, 'release'), '')

const deliveries = (exec: string) =>
  relay.deliveries.filter((d) => JSON.parse(d.body).exec_session_id === exec)

async function eventTypes(name: keyof typeof KEYS, id: string): Promise<string[]> {
  const text = await (await call(name, `/v1/sessions/${id}/events`)).text()
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { event: { type: string } }).event.type)
}

describe('a turn resumed by the runner callback is admitted', () => {
  it('waits for a free turn slot: 429 while another turn runs, resumed by the redelivery', async () => {
    await limit('slots', { concurrent_turns: 1 })
    let inFlight = 0
    let most = 0
    let otherStarted = false
    let exec = ''
    backends.mock.respond(async (request) => {
      inFlight += 1
      most = Math.max(most, inFlight)
      try {
        return await agent(async () => {
          otherStarted = true
          // Held until the resumed turn's callback was answered, whatever the answer.
          await until('the callback answered', () =>
            deliveries(exec).length > 0 ? true : undefined,
          )
          return { text: 'other work' }
        })(request)
      } finally {
        inFlight -= 1
      }
    })
    const waiting = await session('slots')
    exec = await waitingTurn('slots', waiting)
    const other = call('slots', `/v1/sessions/${await session('slots')}/turns`, { input: 'other' })
    await until('the other turn in its model call', () => (otherStarted ? true : undefined))
    await release('slots', waiting)

    const [refused] = await until('the callback', () => deliveries(exec)[0] && deliveries(exec))
    expect(refused?.status).toBe(429)
    expect(JSON.parse(refused?.answer ?? '{}')).toMatchObject({
      error: { code: 'too_many_concurrent_turns', details: { limit: 1, active: 1 } },
    })
    expect((await other).status).toBe(200)
    // The runner redelivers a 429: once the slot is free, the waiting turn is continued.
    const resumed = await until('the redelivery', () =>
      deliveries(exec).find((d) => d.status === 202),
    )
    expect(JSON.parse(resumed.answer)).toEqual({ resumed: true, status: 'completed' })
    expect(most).toBe(1)
    expect((await eventTypes('slots', waiting)).at(-1)).toBe('turn.completed')
  })

  it('over the daily quota the turns keep waiting, and continue once the quota allows', async () => {
    await limit('quota', { tokens_per_day: 60 })
    backends.mock.respond(agent())
    // Two turns, two model calls each (15 tokens a call): the day's 60 tokens are used.
    const ids = [await session('quota'), await session('quota')]
    const execs = []
    for (const id of ids) execs.push(await waitingTurn('quota', id))
    const usage = async () => (await (await call('quota', '/v1/usage')).json()) as UsageReport
    expect((await usage()).tokens).toMatchObject({ used: 60, remaining: 0 })

    for (const id of ids) await release('quota', id)
    for (const exec of execs) {
      const [refused] = await until('the callback', () => deliveries(exec)[0] && deliveries(exec))
      expect(refused?.status).toBe(429)
      expect(JSON.parse(refused?.answer ?? '{}')).toMatchObject({
        error: { code: 'quota_exceeded', details: { quota: 'tokens', limit: 60, used: 60 } },
      })
    }
    // The runner's further redeliveries no longer reach the app.
    relay.target = undefined
    expect(backends.mock.requests).toHaveLength(4)
    expect((await usage()).tokens.used).toBe(60)
    for (const id of ids) expect(await eventTypes('quota', id)).not.toContain('turn.completed')

    // Nothing was lost: with a larger quota the tenant's turn without input continues it.
    await limit('quota', { tokens_per_day: 1_000 })
    const continued = await call('quota', `/v1/sessions/${ids[0]}/turns`, {})
    const answer = (await continued.json()) as Turn
    expect(continued.status, JSON.stringify(answer)).toBe(200)
    expect(answer.status).toBe('completed')
    expect(answer.events.map((e) => e.item?.text)).toContain('reported: released')
    expect(backends.mock.requests).toHaveLength(5)
  })
})

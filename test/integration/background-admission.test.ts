import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * Background runs are charged and refused like every other model call: on `npm start` (its own
 * background worker, the fs store, API keys) a tenant over its daily token quota gets its
 * background turn and background exec accepted (202, recorded), and the worker then refuses
 * them before any model call — each ends `failed` with `quota_exceeded`, nothing is left
 * pending, and the session holds no new turn.
 */
const KEY = 'bg-admission-key-0123456789'
const QUOTA = 150
let dir: string
let mock: MockOpenAI
let server: NodeEntry
let url = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-bg-admission-'))
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    TURNLINE_LIMIT_TOKENS_PER_DAY: String(QUOTA),
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_WORK_SWEEP_MS: '250',
    // No embedded runner (it would need the command sandbox): nothing here runs a command.
    TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
    TURNLINE_RUNNER_SECRET: 'bg-admission-runner-secret',
  })
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function call(method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
}

/** Polls the work's status resource until it leaves `queued`/`running` (no fixed sleep). */
async function settled(location: string): Promise<Record<string, unknown>> {
  let last = ''
  const left = async () => {
    const answer = await call('GET', location)
    last = answer.text
    const state = answer.status === 200 ? answer.json().state : undefined
    return state !== undefined && state !== 'queued' && state !== 'running'
      ? (answer.json() as Record<string, unknown>)
      : undefined
  }
  return vi
    .waitUntil(left, { timeout: 30_000, interval: 50 })
    .catch((error: unknown) => Promise.reject(new Error(`work still: ${last}`, { cause: error })))
}

describe('background runs over the daily token quota', () => {
  it('are accepted, then refused before any model call: failed with quota_exceeded', async () => {
    const id = (await call('POST', '/v1/sessions', {})).json().session_id as string
    mock.enqueue({ text: 'the quota is spent', usage: { input_tokens: 100, output_tokens: 50 } })
    expect((await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })).status).toBe(200)
    expect((await call('GET', '/v1/usage')).json().tokens).toMatchObject({ used: QUOTA })
    // From here any model request fails the test (the mock has nothing queued).
    const async = { prefer: 'respond-async' }
    const turn = await call('POST', `/v1/sessions/${id}/turns`, { input: 'more' }, async)
    const exec = await call('POST', '/v1/exec', { prompt: 'list todos' }, async)
    for (const accepted of [turn, exec]) {
      expect(accepted.status, accepted.text).toBe(202)
      const work = await settled(accepted.headers.get('location') ?? '')
      expect(work).toMatchObject({ state: 'failed', error: { code: 'quota_exceeded' } })
    }
    expect(mock.requests).toHaveLength(1)
    const view = (await call('GET', `/v1/sessions/${id}`)).json()
    expect(view).toMatchObject({ turn_count: 1 })
    expect((await call('GET', '/v1/usage')).json().tokens).toMatchObject({ used: QUOTA })
  })
})

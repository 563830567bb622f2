import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageReport } from '../../src/contract/tenancy.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * Prompt caching end to end: `npm start` (the real entry) against the mock of the OpenAI API,
 * which reports cached input like OpenAI does. Every request of the session names one
 * `prompt_cache_key`; the cached tokens show in the turn's usage; the session's cost, its
 * budget and the tenant's daily cost quota charge them at the cached price.
 */
const KEY = 'prompt-caching-key-0123456789'
const PROMPT = 2_000
const CACHED = 1_920
const OUTPUT = 50
// gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per 1M tokens.
const FIRST = PROMPT * 0.15e-6 + OUTPUT * 0.6e-6
const LATER = (PROMPT - CACHED) * 0.15e-6 + CACHED * 0.075e-6 + OUTPUT * 0.6e-6

let dir: string
let mock: MockOpenAI
let server: NodeEntry
let url: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-prompt-caching-'))
  // The sandbox user must reach the runner's root inside it.
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  // The first request of a cache key misses; every later one reads the prefix from the cache.
  const seen = new Set<unknown>()
  mock.respond((request) => {
    const key = request.body.prompt_cache_key
    const hit = seen.has(key)
    seen.add(key)
    return {
      text: 'done',
      usage: { input_tokens: PROMPT, cached_input_tokens: hit ? CACHED : 0, output_tokens: OUTPUT },
    }
  })
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    OPENAI_API_KEY: 'sk-prompt-caching',
    OPENAI_BASE_URL: mock.baseURL,
    // The mock stands for api.openai.com, which routes its prompt cache by prompt_cache_key.
    TURNLINE_MODEL_PROVIDER: 'openai',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_LIMIT_COST_USD_PER_DAY: '5',
    TURNLINE_LOG: 'off',
  })
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function call<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  expect(res.status, `${path}: ${res.status}`).toBeLessThan(300)
  return (await res.json()) as T
}

const turnUsage = (events: ThreadEvent[]) =>
  events.find((event) => event.type === 'turn.completed')?.usage

describe('prompt caching through npm start', () => {
  it('keys every request of a session alike and charges cached input at the cached price', async () => {
    const before = (await call<UsageReport>('/v1/usage')).cost_usd.used
    const { session_id: id } = await call<{ session_id: string }>('/v1/sessions', {
      limits: { max_budget_usd: FIRST + 2 * LATER + 0.00001 },
    })
    const turns: { status: string; events: ThreadEvent[] }[] = []
    for (const input of ['one', 'two', 'three']) {
      turns.push(await call(`/v1/sessions/${id}/turns`, { input }))
    }

    const keys = mock.requests.map((request) => request.body.prompt_cache_key)
    expect(keys).toHaveLength(3)
    expect(keys[0]).toMatch(/^turnline-[0-9a-f]{16}$/)
    expect(new Set(keys).size).toBe(1)
    expect(keys[0]).not.toContain(id)

    // Shown in the usage of each turn and of the session.
    expect(turnUsage(turns[0]?.events ?? [])).toMatchObject({ cached_input_tokens: 0 })
    expect(turnUsage(turns[1]?.events ?? [])).toEqual({
      input_tokens: PROMPT,
      cached_input_tokens: CACHED,
      cache_creation_tokens: 0,
      output_tokens: OUTPUT,
    })
    const view = await call<Record<string, unknown>>(`/v1/sessions/${id}`)
    expect(view).toMatchObject({
      usage: { input_tokens: 3 * PROMPT, cached_input_tokens: 2 * CACHED },
      price: { input: 0.15e-6, cached_input: 0.075e-6, output: 0.6e-6 },
    })
    // At the cached price, $0.000702 for three turns: within max_budget_usd. Without the
    // discount ($0.00099) the third turn would have crossed it and ended the session.
    expect(view.total_cost_usd).toBeCloseTo(FIRST + 2 * LATER, 12)
    expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed', 'completed'])
    expect(view.budget).toMatchObject({ status: 'ok' })

    // The tenant's day is charged the same (its counter keeps micro-dollars).
    const after = (await call<UsageReport>('/v1/usage')).cost_usd.used
    expect(after - before).toBeCloseTo(FIRST + 2 * LATER, 6)
  })
})

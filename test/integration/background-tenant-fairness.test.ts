import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { gate } from '../support/gate.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * The background worker shares its places between tenants. `npm start` on S3 + Upstash with two
 * keys: a tenant that queues many background turns does not make another tenant's wait behind
 * all of them. With one place the quiet tenant's turn runs next once the place is free; with two,
 * the noisy tenant alone takes both, and the quiet tenant's turn still starts at once, while both
 * of the noisy one's are held (in the place lent back), before the noisy tenant's third.
 */
const NOISY_KEY = 'bg-fair-noisy-0123456789abcdef'
const QUIET_KEY = 'bg-fair-quiet-0123456789abcdef'
let backends: TestBackends
const servers: NodeEntry[] = []

beforeAll(async () => {
  backends = await startTestBackends('bg-fair')
}, 60_000)

afterAll(async () => {
  for (const server of servers) await server.stop()
  await backends?.close()
})

async function serve(concurrency: number): Promise<string> {
  const server = startNodeEntry(
    backends.env({
      PORT: '0',
      TURNLINE_API_KEYS: `${NOISY_KEY}=noisy,${QUIET_KEY}=quiet`,
      TURNLINE_WORK_CONCURRENCY: String(concurrency),
      TURNLINE_LOG: 'off',
    }),
  )
  servers.push(server)
  // Stopped with its test: a server left running would sweep and run the next test's turns.
  onTestFinished(() => server.stop())
  return server.listening()
}

async function call(url: string, key: string, path: string, body: unknown, headers = {}) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  expect(res.status, text).toBeLessThan(300)
  return JSON.parse(text) as Record<string, unknown>
}

/** A new session of `key` with one background turn asking `input`. */
async function backgroundTurn(url: string, key: string, input: string): Promise<void> {
  const session = (await call(url, key, '/v1/sessions', {})).session_id as string
  await call(url, key, `/v1/sessions/${session}/turns`, { input }, { prefer: 'respond-async' })
}

/** The inputs the model was asked, in the order the turns started. */
function asked(): string[] {
  return backends.mock.requests.map((request) => {
    const text = JSON.stringify(request.body)
    return /"(noisy-\d|quiet)"/.exec(text)?.[1] ?? '?'
  })
}

describe('background turns of two tenants', () => {
  it("run the quiet tenant's turn next, not after every queued turn of the noisy one", async () => {
    const url = await serve(1)
    backends.mock.reset()
    const held = gate()
    onTestFinished(held.open)
    backends.mock.respond(() => ({ text: 'done', hold: held.promise }))
    for (let i = 1; i <= 4; i++) await backgroundTurn(url, NOISY_KEY, `noisy-${i}`)
    await until('the first turn asks the model', () => (asked().length > 0 ? true : undefined))
    await backgroundTurn(url, QUIET_KEY, 'quiet')
    held.open()
    await until('every turn ran', () => (asked().length === 5 ? true : undefined))
    expect(asked()).toEqual(['noisy-1', 'quiet', 'noisy-2', 'noisy-3', 'noisy-4'])
  }, 60_000)

  it("give a lone tenant every place, and another tenant's turn one at once", async () => {
    const url = await serve(2)
    backends.mock.reset()
    const held = gate()
    onTestFinished(held.open)
    backends.mock.respond((request) =>
      JSON.stringify(request.body).includes('quiet')
        ? { text: 'done' }
        : { text: 'done', hold: held.promise },
    )
    for (let i = 1; i <= 3; i++) await backgroundTurn(url, NOISY_KEY, `noisy-${i}`)
    // Alone, the noisy tenant holds both places (it held one, the other kept empty, before).
    await until('two turns ask the model', () => (asked().length === 2 ? true : undefined))
    await backgroundTurn(url, QUIET_KEY, 'quiet')
    await until("the quiet tenant's turn asks the model", () =>
      asked().includes('quiet') ? true : undefined,
    )
    expect(asked()).toEqual(['noisy-1', 'noisy-2', 'quiet'])
    held.open()
    await until('every turn ran', () => (asked().length === 4 ? true : undefined))
    expect(asked()).toEqual(['noisy-1', 'noisy-2', 'quiet', 'noisy-3'])
  }, 60_000)
})

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { requireServices } from '../support/services.ts'
import { startTestBackends } from '../support/test-deployment.ts'

/**
 * An intent answered 202 survives a crash of the server on the configurations with a shared
 * coordinator, as it does on the embedded default (embedded-durability.test.ts): `npm start`
 * as a real process on S3 (moto) + Upstash (the REST proxy on redis-server), and on the fs store
 * + plain Redis; intents accepted, the process killed (SIGKILL), a new one started on the same
 * backends applies each once, in order, and none again after the next crash.
 */
const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

interface Deployment {
  env: Record<string, string>
  mock: MockOpenAI
}

const NO_RUNNER = {
  // No embedded runner (it would need the command sandbox): nothing here runs a command.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'intents-restart-runner-secret',
  TURNLINE_LOG: 'off',
}

const configurations: [string, () => Promise<Deployment>][] = [
  [
    'S3 and Upstash',
    async () => {
      const backends = await startTestBackends('intents-restart')
      closers.push(() => backends.close())
      return { env: backends.env({ PORT: '0', ...NO_RUNNER }), mock: backends.mock }
    },
  ],
  [
    'the fs store and plain Redis',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'turnline-intents-restart-'))
      const mock = await startMockOpenAI()
      closers.push(
        () => rm(dir, { recursive: true, force: true }),
        () => mock.close(),
      )
      const env = {
        PORT: '0',
        TURNLINE_DATA_DIR: join(dir, 'data'),
        REDIS_URL: requireServices().redisUrl,
        // Its own keys in the shared redis-server: this data dir is a deployment of its own.
        TURNLINE_REDIS_NAMESPACE: `intents-restart-${process.pid}-${Date.now()}`,
        OPENAI_BASE_URL: mock.baseURL,
        OPENAI_API_KEY: 'sk-test',
        TURNLINE_MODEL: 'gpt-4o-mini',
        ...NO_RUNNER,
      }
      return { env, mock }
    },
  ],
]

describe.each(configurations)('intents across a kill -9, on %s', (_, deploy) => {
  it('applies every intent answered 202 exactly once, in order, after the restart', async () => {
    const { env, mock } = await deploy()
    let server: NodeEntry | undefined
    let url = ''
    const start = async () => {
      server = startNodeEntry(env)
      closers.push(async () => server?.stop())
      url = await server.listening()
    }
    const { call } = jsonCalls(() => url)
    const userTexts = () =>
      ((mock.requests.at(-1)?.body.messages ?? []) as { role: string; content: string }[])
        .filter((m) => m.role === 'user')
        .map((m) => m.content)

    await start()
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    mock.enqueue({ text: 'first answer' })
    expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'hello' })).status).toBe(
      200,
    )
    for (const n of [1, 2, 3]) {
      const accepted = await call('POST', `/v1/sessions/${session}/intents`, { text: `steer ${n}` })
      expect(accepted.status, accepted.text).toBe(202)
    }
    await server?.crash()
    await start()

    mock.enqueue({ text: 'steered' })
    const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go on' })
    expect(turn.status, turn.text).toBe(200)
    const events = turn.json().events as ThreadEvent[]
    expect(events.filter((e) => e.type === 'interjected')).toHaveLength(3)
    expect(userTexts()).toEqual(['hello', 'steer 1', 'steer 2', 'steer 3', 'go on'])

    await server?.crash()
    await start()
    mock.enqueue({ text: 'quiet' })
    const after = await call('POST', `/v1/sessions/${session}/turns`, { input: 'again' })
    expect(after.status, after.text).toBe(200)
    expect((after.json().events as ThreadEvent[]).some((e) => e.type === 'interjected')).toBe(false)
    expect(userTexts().filter((t) => t.startsWith('steer'))).toHaveLength(3)
    await server?.stop()
    // Three starts of npm start: each takes seconds on a loaded machine.
  }, 180_000)
})

import { createHash, createHmac } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli-process.ts'
import { keptStartAnswer, startHookReceiver } from '../support/hook-receiver.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * A `session_start` hook answering over the inline limit (64 KiB) as a session is created and as
 * it is forked, through `npm start`'s entry on the fs store and on S3 (moto) with Upstash: each
 * answer is recorded by the batch that creates its session, listed by `GET …/artifacts` as a
 * `hook_answer` of `seq` 0 with no turn, read back whole by `GET …/artifacts/{id}`, and listed by
 * the CLI.
 */
const KEY = 'acme-start-hooks-key-0123456789abc'
const TOOL_SECRET = 'start-hooks-tool-secret-0123456789'
const TENANT_SECRET = createHmac('sha256', TOOL_SECRET).update('acme').digest('hex')
const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')

/** `lines` lines and a JSON object around them: a hook's long answer. */
function longAnswer(lines: number, mark: string): string {
  const rows = Array.from({ length: lines }, (_, n) => `${mark} ${String(n).padStart(40, '0')}`)
  return JSON.stringify({ notes: rows }, null, 1)
}

let dir: string
let backends: TestBackends
let hooks: Awaited<ReturnType<typeof startHookReceiver>>
let fsMock: MockOpenAI

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-start-hooks-'))
  await chmod(dir, 0o711)
  hooks = await startHookReceiver(TENANT_SECRET)
  fsMock = await startMockOpenAI()
  backends = await startTestBackends('start-hooks')
}, 60_000)

afterAll(async () => {
  await hooks?.close()
  await fsMock?.close()
  await backends?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const stores = [
  {
    store: 'fs',
    env: (): Record<string, string> => ({
      TURNLINE_DATA_DIR: join(dir, 'fs-data'),
      OPENAI_API_KEY: 'sk-start-hooks',
      OPENAI_BASE_URL: fsMock.baseURL,
      TURNLINE_MODEL: 'gpt-4o-mini',
    }),
    mock: () => fsMock,
  },
  {
    store: 'S3',
    env: (): Record<string, string> => backends.env({ TURNLINE_DATA_DIR: join(dir, 's3-data') }),
    mock: () => backends.mock,
  },
]

describe.each(stores)('session_start hook answers kept as a session starts ($store)', (kind) => {
  let server: ServerProcess
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const listing = async (session: string) => {
    const response = await fetch(`${server.url}/v1/sessions/${session}/artifacts`, { headers })
    expect(response.status).toBe(200)
    return ((await response.json()) as { outputs: Record<string, unknown>[] }).outputs
  }
  const whole = async (session: string, id: unknown) => {
    const response = await fetch(`${server.url}/v1/sessions/${session}/artifacts/${id}`, {
      headers,
    })
    expect(response.status).toBe(200)
    return sha(new Uint8Array(await response.arrayBuffer()))
  }

  beforeAll(async () => {
    server = await startServerProcess({
      ...kind.env(),
      TURNLINE_API_KEYS: `${KEY}=acme`,
      TURNLINE_TOOL_SECRET: TOOL_SECRET,
      TURNLINE_TOOL_ALLOWED_HOSTS: hooks.host,
      TURNLINE_LOG: 'off',
    })
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  it('a created and a forked session list their start hook answer, readable whole, and the CLI lists it', async () => {
    const startAnswer = longAnswer(3_000, `startup-${kind.store}`)
    const forkAnswer = longAnswer(2_000, `fork-${kind.store}`)
    expect(forkAnswer.length).toBeGreaterThan(64 * 1024)
    hooks.setReply((hook) => ({
      body: hook.body.source === 'fork' ? forkAnswer : startAnswer,
    }))
    const created = await post('/v1/sessions', {
      hooks: [{ event: 'session_start', type: 'http', name: 'boot', url: hooks.url('/start') }],
    })
    expect(created.status).toBe(201)
    const session = String(created.body.session_id)
    const [started] = await listing(session)
    expect(started).toEqual(keptStartAnswer(startAnswer))
    expect(await whole(session, started?.artifact_id)).toBe(sha(startAnswer))

    kind.mock().enqueue({ text: 'Ready.' })
    const turn = await post(`/v1/sessions/${session}/turns`, { input: 'hello' })
    expect(turn.body.status).toBe('completed')
    const forked = await post(`/v1/sessions/${session}/fork`, { at_turn: 1 })
    expect(forked.status, JSON.stringify(forked.body).slice(0, 300)).toBe(201)
    const fork = String(forked.body.session_id)
    const [forkKept, ...more] = await listing(fork)
    expect(more).toEqual([])
    expect(forkKept).toEqual(keptStartAnswer(forkAnswer))
    expect(await whole(fork, forkKept?.artifact_id)).toBe(sha(forkAnswer))
    // The source's listing is unchanged by the fork and its turn.
    expect(await listing(session)).toEqual([started])

    const cli = await runCli(['artifact', fork, '--url', server.url, '--api-key', KEY])
    expect(cli.code, cli.stderr).toBe(0)
    expect(cli.stdout).toBe(
      `${forkKept?.artifact_id}\t${forkAnswer.length} bytes\t${forkKept?.lines} lines\thook session_start boot\t\n`,
    )
  })
})

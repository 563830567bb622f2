import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { gate } from '../support/gate.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { requireServices } from '../support/services.ts'

/**
 * A crashed turn is told from a running one: `GET /v1/sessions/{id}` shows `activity.turn_state`
 * `running` while `npm start` works on the turn (it holds and renews the session's lease), and
 * `interrupted` once that process was killed with SIGKILL mid-turn and nobody runs the open turn
 * — on the embedded default (the coordinator in the process: the lease died with it) and on the
 * fs store + plain Redis (the lease outlives the process in Redis until it lapses; a lease not
 * renewed for two renewal periods is a dead holder's). A new turn call resumes it. The session
 * list (`activity_state`, `turn_state` of each summary) says the same as the session's view.
 */
const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

const configurations: [string, () => Record<string, string>][] = [
  ['the embedded default', () => ({})],
  [
    'the fs store and plain Redis',
    () => ({
      REDIS_URL: requireServices().redisUrl,
      TURNLINE_REDIS_NAMESPACE: `turn-interrupted-${process.pid}-${Date.now()}`,
      // A short lease: the dead process's lease goes silent within seconds.
      TURNLINE_LEASE_MS: '3000',
    }),
  ],
]

describe.each(configurations)('an open turn after a kill -9, on %s', (_, backend) => {
  it('is running while its process works on it, interrupted once it was killed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnline-turn-interrupted-'))
    // The sandbox user must get through to the runner's workspaces (mkdtemp makes it 0700).
    await chmod(dir, 0o711)
    const mock = await startMockOpenAI()
    const held = gate()
    closers.push(
      () => rm(dir, { recursive: true, force: true }),
      () => mock.close(),
      async () => held.open(),
    )
    const env = {
      PORT: '0',
      TURNLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_BASE_URL: mock.baseURL,
      OPENAI_API_KEY: 'sk-test',
      TURNLINE_MODEL: 'gpt-4o-mini',
      TURNLINE_LOG: 'off',
      ...backend(),
    }
    let server: NodeEntry | undefined
    let url = ''
    const start = async () => {
      server = startNodeEntry(env)
      closers.push(async () => server?.stop())
      url = await server.listening()
    }
    const { call } = jsonCalls(() => url)
    const turnState = async (session: string) => {
      const view = await call('GET', `/v1/sessions/${session}`)
      expect(view.status, view.text).toBe(200)
      const activity = view.json().activity as { state: string; turn_state?: string } | undefined
      const shown = activity ? `${activity.state}/${activity.turn_state ?? '-'}` : 'none'
      // The listing says the same of the session (its summary's activity_state and turn_state).
      const list = await call('GET', '/v1/sessions')
      const listed = (
        list.json().sessions as {
          session_id: string
          activity_state?: string
          turn_state?: string
        }[]
      ).find((s) => s.session_id === session)
      const inList = listed?.activity_state
        ? `${listed.activity_state}/${listed.turn_state ?? '-'}`
        : 'none'
      return inList === shown ? shown : `view ${shown}, list ${inList}`
    }

    await start()
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    // The model asks for a tool; the turn commits its state before the tool runs, then the
    // next model request hangs: the turn is open and its process holds the lease.
    mock.enqueue(
      { toolCalls: [{ name: 'exec_command', arguments: '{"cmd":"echo hi"}' }] },
      { text: 'never answered', hold: held.promise },
    )
    const running = call('POST', `/v1/sessions/${session}/turns`, { input: 'look' }).catch(
      (error: unknown) => error,
    )
    await expect
      .poll(() => turnState(session), { timeout: 60_000, interval: 200 })
      .toBe('open/running')

    // The process is inside the held model request (the tool ran) when it is killed.
    await expect.poll(() => mock.requests.length, { timeout: 60_000, interval: 100 }).toBe(2)
    await server?.crash()
    await running
    await start()
    await expect
      .poll(() => turnState(session), { timeout: 60_000, interval: 200 })
      .toBe('open/interrupted')

    mock.enqueue({ text: 'resumed' })
    // With Redis the dead holder's lease is silent before it lapses: 409 session_busy until then.
    let resumed = { status: 0, text: '' }
    await expect
      .poll(
        async () => {
          resumed = await call('POST', `/v1/sessions/${session}/turns`, {})
          return `${resumed.status} ${resumed.text}`
        },
        { timeout: 60_000, interval: 500 },
      )
      .toMatch(/^200 /)
    expect(await turnState(session)).toBe('none')
    await server?.stop()
    // Two starts of npm start on a loaded machine.
  }, 180_000)
})

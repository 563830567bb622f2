import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlineClient } from '../../client/index.ts'
import { collect, runCli, spawnCli } from '../support/cli-process.ts'
import { gate } from '../support/gate.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'

/**
 * `turnline exec resume` on a session another request keeps busy (its turn held at the mock
 * model): the CLI waits for it at most `--busy-timeout` seconds, then exits 7 naming the session
 * and the flag (it asked again without end before); a turn that ends within the wait, once the
 * command said it waits, is followed by the resumed prompt as before.
 */
let dir = ''
let mock: MockOpenAI
let server: ServerProcess
let client: TurnlineClient

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-cli-busy-'))
  mock = await startMockOpenAI()
  server = await startServerProcess({
    TURNLINE_DATA_DIR: dir,
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
  })
  client = new TurnlineClient({ baseUrl: server.url })
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await mock?.close()
  await rm(dir, { recursive: true, force: true })
})

/** A session whose first turn runs, held at the model until `open()`. */
async function busySession() {
  const held = gate()
  const before = mock.requests.length
  mock.enqueue({ text: 'The held answer.', hold: held.promise })
  const { session_id: id } = await client.createSession()
  const turn = client.stepTurn(id, { input: 'Hold on.' })
  await expect.poll(() => mock.requests.length, { timeout: 15_000 }).toBe(before + 1)
  return { id, open: held.open, turn }
}

const resume = (id: string, args: string[]) =>
  runCli(['exec', 'resume', '--url', server.url, ...args, id, 'Next.'], { timeoutMs: 60_000 })

describe('turnline exec on a busy session', { timeout: 120_000 }, () => {
  it('gives up after --busy-timeout, naming the session and the flag', async () => {
    const busy = await busySession()
    const started = Date.now()
    const run = await resume(busy.id, ['--busy-timeout', '1'])
    expect(run.code, run.stderr).toBe(7)
    expect(run.stderr).toContain('is busy: another request runs a turn on it; waiting up to 1 s')
    expect(run.stderr).toContain(`session ${busy.id} is still busy after 1 s`)
    expect(run.stderr).toContain('--busy-timeout')
    expect(run.stderr).toContain(`turnline exec resume ${busy.id}`)
    expect(Date.now() - started).toBeLessThan(20_000)
    busy.open()
    expect((await busy.turn).status).toBe('completed')
    // Nothing of the resumed prompt ran.
    expect(mock.requests).toHaveLength(1)
    mock.reset()
  })

  it('runs the prompt once the busy turn ends within the wait', async () => {
    const busy = await busySession()
    mock.enqueue({ text: 'After the wait.' })
    const child = spawnCli([
      'exec',
      'resume',
      '--url',
      server.url,
      '--busy-timeout',
      '60',
      busy.id,
      'Next.',
    ])
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const run = collect(child, { timeoutMs: 60_000 })
    // Released once the command said it waits on the busy session.
    await expect
      .poll(() => stderr, { timeout: 30_000 })
      .toContain(
        `session ${busy.id} is busy: another request runs a turn on it; waiting up to 60 s`,
      )
    busy.open()
    const done = await run
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toBe('After the wait.\n')
    mock.assertDone()
    mock.reset()
  })

  it('refuses a --busy-timeout that is not seconds', async () => {
    const run = await runCli(['exec', '--url', server.url, '--busy-timeout', 'soon', 'hi'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('--busy-timeout: seconds from 0 to 86400, not soon')
  })
})

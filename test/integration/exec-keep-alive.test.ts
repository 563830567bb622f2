import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlineClient } from '../../client/index.ts'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { nodeBackends } from '../../functions/entries/node-backends.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { gate } from '../support/gate.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

/**
 * `POST /v1/exec` with `Prefer: keep-alive` over real HTTP: the app built from its environment
 * (sessions on disk, the mock of the OpenAI API as the model), its keep-alive period 100 ms. While
 * the model holds its answer the stream sends blank lines, so the typed client, which bounds the
 * silence of a stream that sends them, runs a silent run to its end; without the preference the
 * stream is the bare lines of `vtcode exec --json`.
 */
let dir: string
let mock: MockOpenAI
let server: RunningServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-exec-keep-alive-'))
  mock = await startMockOpenAI()
  const deps = await createDeps(
    {
      TURNLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_API_KEY: 'sk-exec-keep-alive',
      OPENAI_BASE_URL: mock.baseURL,
      TURNLINE_MODEL: 'gpt-4o-mini',
      TURNLINE_LOG: 'off',
    },
    nodeBackends,
  )
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    follow: { ...deps.http.follow, heartbeatMs: 100 },
    log: () => {},
  })
  server = await serveApp(app)
}, 60_000)

afterAll(async () => {
  await server?.close()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/**
 * An exec run read raw while the model holds its answer: released once `blankLines` empty lines
 * came, or `afterFirstMs` after the first line (and after 10 s in any case).
 */
async function heldExec(
  headers: Record<string, string>,
  release: { blankLines: number } | { afterFirstMs: number },
) {
  const held = gate()
  mock.enqueue({ text: 'Held answer.', hold: held.promise })
  const timers = [setTimeout(held.open, 10_000)]
  const started = Date.now()
  try {
    const res = await fetch(`${server.url}/v1/exec`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ prompt: 'answer when released' }),
    })
    let text = ''
    const decoder = new TextDecoder()
    const reader = res.body?.getReader()
    for (;;) {
      const next = await reader?.read()
      if (!next || next.done) break
      const chunk = next.value
      const first = text === ''
      text += decoder.decode(chunk, { stream: true })
      if ('blankLines' in release && blanks(text.split('\n').slice(0, -1)) >= release.blankLines)
        held.open()
      if ('afterFirstMs' in release && first)
        timers.push(setTimeout(held.open, release.afterFirstMs))
    }
    return { res, lines: text.split('\n'), ms: Date.now() - started }
  } finally {
    for (const timer of timers) clearTimeout(timer)
  }
}

const blanks = (lines: string[]) => lines.filter((line) => line === '').length

describe('an exec run that sends nothing for a while', () => {
  it('sends blank lines between its events with Prefer: keep-alive, and says so', async () => {
    // Released once three blank lines came: without them it would be held 10 s.
    const { res, lines, ms } = await heldExec({ prefer: 'keep-alive' }, { blankLines: 3 })
    expect(res.headers.get('preference-applied')).toBe('keep-alive')
    expect(ms).toBeLessThan(8000)
    const events = lines.filter((line) => line !== '').map((line) => JSON.parse(line))
    expect(events[0]?.type).toBe('thread.started')
    expect(events.at(-1)?.type).toBe('thread.completed')
    expect(blanks(lines.slice(0, -1))).toBeGreaterThanOrEqual(3)
  }, 30_000)

  it('without it, sends the bare ThreadEvent lines of vtcode exec --json only', async () => {
    const { res, lines } = await heldExec({}, { afterFirstMs: 800 })
    expect(res.headers.get('preference-applied')).toBeNull()
    expect(lines.at(-1)).toBe('')
    expect(lines.slice(0, -1).every((line) => line.startsWith('{"type":'))).toBe(true)
  }, 30_000)

  it('is run to its end by the typed client, whose silence limit it stays under', async () => {
    const held = gate()
    mock.enqueue({ text: 'Held answer.', hold: held.promise })
    const timer = setTimeout(held.open, 1500)
    const client = new TurnlineClient({ baseUrl: server.url })
    const types: string[] = []
    try {
      for await (const event of client.exec({ prompt: 'hold on' }, { idleTimeoutMs: 500 }))
        types.push(event.type)
    } finally {
      clearTimeout(timer)
    }
    expect(types[0]).toBe('thread.started')
    expect(types.at(-1)).toBe('thread.completed')
  }, 30_000)
})

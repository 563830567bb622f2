import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { listAll } from '../../src/store/list-all.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { expectFilesMatch } from '../support/session-files.ts'

/**
 * `npm start` with its defaults — the fs store, the coordinator in the process, no Redis — as a
 * real process, restarted for real: an intent answered 202 survives a kill -9 of the server and
 * is applied exactly once by the next process, and the session's folder holds VT Code's files,
 * current after every turn, as a reader of the folder sees them.
 */
let dir: string
let mock: MockOpenAI
let server: NodeEntry | undefined
let url = ''

const data = () => join(dir, 'data')

async function start(): Promise<void> {
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: data(),
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
  })
  url = await server.listening()
}

/** A crash: SIGKILL to the server's process group, nothing flushed or closed. */
async function kill(): Promise<void> {
  await server?.crash()
  server = undefined
}

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, text, json: () => JSON.parse(text) as Record<string, unknown> }
}

/** Every committed event, as `GET …/events` serves them. */
async function committed(session: string): Promise<ThreadEvent[]> {
  const page = await call('GET', `/v1/sessions/${session}/events?after=-1`)
  expect(page.status).toBe(200)
  const lines = page.text.trim().split('\n')
  return lines.map((line, seq) => {
    const parsed = JSON.parse(line) as { seq: number; event: ThreadEvent }
    expect(parsed.seq).toBe(seq)
    return parsed.event
  })
}

const userTexts = (index: number) =>
  ((mock.requests[index]?.body.messages ?? []) as { role: string; content: string }[])
    .filter((m) => m.role === 'user')
    .map((m) => m.content)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-embedded-'))
  // The sandbox user must get through to the runner's workspaces (mkdtemp makes it 0700).
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  await start()
})

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('npm start without Redis, across a kill -9', () => {
  it('applies every intent answered 202 exactly once after a restart, in order, and keeps the cap', async () => {
    const files = new FsObjectStore({ root: data() })
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    mock.enqueue({ text: 'first answer' })
    expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'hello' })).status).toBe(
      200,
    )
    await expectFilesMatch(files, session, await committed(session), 'after turn 1')

    const accepted: string[] = []
    for (let n = 1; n <= 16; n++) {
      const answer = await call('POST', `/v1/sessions/${session}/intents`, { text: `steer ${n}` })
      expect(answer.status).toBe(202)
      expect(answer.json().pending).toBe(n)
      accepted.push(answer.json().id as string)
    }
    await kill()
    await start()

    // the cap holds in the new process: the 16 are still pending
    const full = await call('POST', `/v1/sessions/${session}/intents`, { text: 'one too many' })
    expect(full.status).toBe(409)
    expect(full.json()).toMatchObject({ error: { code: 'follow_up_queue_full' } })

    mock.enqueue({ text: 'steered' })
    const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go on' })
    expect(turn.status).toBe(200)
    const events = turn.json().events as ThreadEvent[]
    expect(events.filter((e) => e.type === 'interjected')).toHaveLength(16)
    const steered = mock.requests.length - 1
    expect(userTexts(steered)).toEqual([
      'hello',
      ...accepted.map((_, i) => `steer ${i + 1}`),
      'go on',
    ])
    await expectFilesMatch(files, session, await committed(session), 'after turn 2')

    // applied exactly once: nothing is pending, in this process or the next
    await kill()
    await start()
    mock.enqueue({ text: 'quiet' })
    const after = await call('POST', `/v1/sessions/${session}/turns`, { input: 'again' })
    expect((after.json().events as ThreadEvent[]).some((e) => e.type === 'interjected')).toBe(false)
    expect(userTexts(mock.requests.length - 1).filter((t) => t.startsWith('steer'))).toHaveLength(
      16,
    )
    const left = (await listAll(files, '')).objects.filter((o) => o.key.includes('/intents/'))
    expect(left).toEqual([])
    expect(
      (await call('POST', `/v1/sessions/${session}/intents`, { text: 'room again' })).json(),
    ).toMatchObject({ pending: 1 })
    await expectFilesMatch(files, session, await committed(session), 'after turn 3')
  })

  it('keeps events.jsonl, the turn index and the manifest current after every turn', async () => {
    const files = new FsObjectStore({ root: data() })
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    await expectFilesMatch(files, session, await committed(session), 'created')
    for (let n = 1; n <= 6; n++) {
      mock.enqueue({ text: `answer ${n}` })
      const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: `turn ${n}` })
      expect(turn.status).toBe(200)
      await expectFilesMatch(files, session, await committed(session), `turn ${n}`)
      if (n === 3) {
        await kill()
        await start()
      }
    }
    const done = await call('POST', `/v1/sessions/${session}/complete`, {})
    expect(done.status).toBe(200)
    await expectFilesMatch(files, session, await committed(session), 'completed')
  })
})

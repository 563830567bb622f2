import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type OpenResponsesEvent,
  runningResponseOf,
  TurnlineApiError,
  TurnlineClient,
} from '../../client/index.ts'
import { gate } from '../support/gate.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * The typed client's Open Responses helpers against `npm start` (the real entry), the mock of
 * the OpenAI API holding the model's answer: a keyed request sent again while its response runs
 * is refused 409 `session_busy` naming that response, which `responses.stream` follows.
 */
let dir: string
let mock: MockOpenAI
let server: NodeEntry
let client: TurnlineClient

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-responses-follow-'))
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_API_KEY: 'sk-responses-follow',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_LOG: 'off',
  })
  client = new TurnlineClient({ baseUrl: await server.listening() })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

const idOf = (event: OpenResponsesEvent | undefined) =>
  (event as { response?: { id?: string } } | undefined)?.response?.id

describe('a keyed response sent again while it runs', () => {
  it('responses.stream follows the running response; create names it', async () => {
    const held = gate()
    mock.enqueue({ text: 'Held answer.', hold: held.promise })
    const request = { model: 'gpt-4o-mini', input: 'Answer when released.' }
    const key = { idempotencyKey: 'follow-while-running-1' }
    const first = collect(client.responses.stream(request, key))
    await expect.poll(() => mock.requests.length).toBe(1)

    const refused = await client.responses.create(request, key).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TurnlineApiError)
    expect(refused).toMatchObject({ status: 409, code: 'session_busy' })
    const running = runningResponseOf(refused)
    expect(running).toMatch(/^resp_/)

    // Sent again streamed: the running response's events, from its first, not a 409.
    const second = collect(client.responses.stream(request, key))
    await expect.poll(() => mock.requests.length).toBe(1)
    held.open()
    const [firstEvents, secondEvents] = await Promise.all([first, second])
    expect(firstEvents.at(-1)?.type).toBe('response.completed')
    expect(idOf(firstEvents[0])).toBe(running)
    expect(secondEvents.map((e) => e.sequence_number)).toEqual(
      firstEvents.map((e) => e.sequence_number),
    )
    expect(secondEvents.at(-1)?.type).toBe('response.completed')
    expect(idOf(secondEvents.at(-1))).toBe(running)
    expect(mock.requests).toHaveLength(1)
  }, 30_000)
})

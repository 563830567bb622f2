import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDenoScript } from '../support/deno-script.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'

/**
 * The typed client outside Node: its sources run in Deno with `--allow-net` only (no env, no
 * files), against `npm start`'s entry with the mock OpenAI model behind the OpenAI adapter.
 */
let dir = ''
let mock: MockOpenAI
let server: ServerProcess

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-client-deno-'))
  mock = await startMockOpenAI()
  server = await startServerProcess({
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_LOG: 'off',
  })
})
afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the client in Deno', () => {
  it('streams a turn, follows the feed and maps errors with the network permission only', async () => {
    mock.enqueue({ text: 'Hello, Deno.' })
    const host = new URL(server.url).host
    const run = await runDenoScript(
      'test/support/client-deno-script.ts',
      [`--allow-net=${host}`],
      [server.url],
    )
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      streamed: [1, 2, 3, 4],
      status: 'completed',
      followed: [
        'thread.started',
        'turn.started',
        'item.started',
        'item.completed',
        'turn.completed',
        'thread.completed',
      ],
      missing: ['TurnlineApiError', 'not_found'],
    })
    mock.assertDone()
  })
})

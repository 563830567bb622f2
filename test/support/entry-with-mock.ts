import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from './mock-openai.ts'
import { type NodeEntry, startNodeEntry } from './node-entry.ts'

export interface EntryWithMock {
  /** The temp folder; the data dir is its `data`. */
  dir: string
  mock: MockOpenAI
  server: NodeEntry
  url: string
}

/**
 * `npm start` as a real process for a test file, on the fs store in a temp folder the sandbox
 * user can get through, answering with the mock OpenAI model (gpt-4o-mini); `env` adds to that
 * (a function: read when the entry starts, after the file's earlier `beforeAll` hooks).
 * Started before the file's tests, stopped and removed after them.
 */
export function useEntryWithMock(
  name: string,
  env: Record<string, string> | (() => Record<string, string>),
): EntryWithMock {
  const fixture = {} as EntryWithMock
  beforeAll(async () => {
    fixture.dir = await mkdtemp(join(tmpdir(), `turnline-${name}-`))
    await chmod(fixture.dir, 0o711)
    fixture.mock = await startMockOpenAI()
    fixture.server = startNodeEntry({
      PORT: '0',
      TURNLINE_DATA_DIR: join(fixture.dir, 'data'),
      OPENAI_BASE_URL: fixture.mock.baseURL,
      OPENAI_API_KEY: 'sk-test',
      TURNLINE_MODEL: 'gpt-4o-mini',
      ...(typeof env === 'function' ? env() : env),
    })
    fixture.url = await fixture.server.listening()
  }, 60_000)
  afterAll(async () => {
    await fixture.server?.stop()
    await fixture.mock?.close()
    if (fixture.dir) await rm(fixture.dir, { recursive: true, force: true })
  })
  return fixture
}

/**
 * The environment of an entry with one API key (tenant `tenant-a`) and no embedded runner (that
 * would need the command sandbox; nothing a test using this runs a command), plus `env`.
 */
export function keyedEntryEnv(
  name: string,
  key: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    TURNLINE_API_KEYS: `${key}=tenant-a`,
    TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
    TURNLINE_RUNNER_SECRET: `${name}-runner-secret`,
    ...env,
  }
}

import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { launchChromium } from './chromium.ts'
import type { MockOpenAI } from './mock-openai.ts'
import { type ServerProcess, startServerProcess } from './server-process.ts'
import { startTestBackends, type TestBackends } from './test-deployment.ts'

export interface ViewerServer {
  /** The data dir's parent, a temp folder removed after the file's tests. */
  readonly dir: string
  readonly backends: TestBackends
  readonly mock: MockOpenAI
  readonly server: ServerProcess
  readonly browser: Browser
}

/**
 * What the viewer's browser tests run on, set up once per file: `npm start`'s entry (with the
 * given environment, its data in a temp folder the sandbox user can reach) on the local
 * services and the mock OpenAI model, and headless Chromium.
 */
export function useViewerServer(name: string, env: Record<string, string> = {}): ViewerServer {
  let set: ViewerServer | undefined
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), `turnline-${name}-`))
    await chmod(dir, 0o711) // the sandbox user must reach the workspaces
    const backends = await startTestBackends(name)
    const server = await startServerProcess(
      backends.env({ TURNLINE_DATA_DIR: join(dir, 'data'), ...env }),
    )
    set = { dir, backends, mock: backends.mock, server, browser: await launchChromium() }
  }, 90_000)
  afterAll(async () => {
    await set?.browser.close()
    await set?.server.stop()
    await set?.backends.close()
    if (set?.dir) await rm(set.dir, { recursive: true, force: true })
  })
  const get = <K extends keyof ViewerServer>(key: K): ViewerServer[K] => {
    if (!set) throw new Error('the viewer server is not started yet (beforeAll)')
    return set[key]
  }
  return {
    get dir() {
      return get('dir')
    },
    get backends() {
      return get('backends')
    },
    get mock() {
      return get('mock')
    },
    get server() {
      return get('server')
    },
    get browser() {
      return get('browser')
    },
  }
}

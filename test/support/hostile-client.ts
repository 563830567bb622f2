import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { TurnlineClient, type TurnlineClientOptions } from '../../client/index.ts'
import {
  type Act,
  type HostileFront,
  type SeenRequest,
  startHostileFront,
} from './hostile-front.ts'
import { type ServerProcess, startServerProcess } from './server-process.ts'

/**
 * The typed client in front of a server that misbehaves: `npm start`'s entry (the offline demo
 * model, sessions on disk) started once for the test file, and a hostile front
 * (hostile-front.ts) per test, closed after it. `direct` talks to the server itself.
 */
export interface HostileHarness {
  readonly direct: TurnlineClient
  /** The server's own address. */
  readonly url: string
  /** A client through a front that does `act` to the first request `matches` picks. */
  through(
    matches: (request: SeenRequest) => boolean,
    act: Act,
    options?: Omit<TurnlineClientOptions, 'baseUrl'>,
  ): Promise<{ client: TurnlineClient; seen: SeenRequest[] }>
}

export function hostileHarness(env: Record<string, string> = {}): HostileHarness {
  let dir: string
  let server: ServerProcess
  let direct: TurnlineClient | undefined
  let front: HostileFront | undefined

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'turnline-hostile-'))
    server = await startServerProcess({
      TURNLINE_DATA_DIR: dir,
      TURNLINE_LOG: 'off',
      TURNLINE_MODEL_PROVIDER: 'demo',
      ...env,
    })
    direct = new TurnlineClient({ baseUrl: server.url })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  afterEach(async () => {
    await front?.close()
    front = undefined
  })

  return {
    get url() {
      if (!server) throw new Error('the server is not started yet')
      return server.url
    },
    get direct() {
      if (!direct) throw new Error('the server is not started yet')
      return direct
    },
    async through(matches, act, options = {}) {
      let done = false
      front = await startHostileFront(server.url, (request) => {
        if (done || !matches(request)) return undefined
        done = true
        return act
      })
      return { client: new TurnlineClient({ ...options, baseUrl: front.url }), seen: front.seen }
    },
  }
}

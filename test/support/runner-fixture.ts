import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import { startCallbackReceiver } from './callback-receiver.ts'
import { type RunnerProcess, startRunnerProcess } from './runner-process.ts'

export type CallbackReceiver = Awaited<ReturnType<typeof startCallbackReceiver>>

export interface RunnerFixture {
  /** The secret the runner and its client share. */
  secret: string
  /** The runner's root folder: a scope's workspace is `<root>/<tenant>/<sessionId>`. */
  root: string
  runner: RunnerProcess
  /** The engine's HTTP client of the runner. */
  client: HttpSandboxRunner
  /** The receiver of the runner's exit notices (only when started with `callbacks`). */
  receiver: CallbackReceiver
}

/**
 * The reference runner as a real process in a temporary root, with its HTTP client, for the
 * tests of one file: started before them, stopped (and the root removed) after them. With
 * `callbacks` it posts its exit notices to a real receiver (`failFirst`: see
 * startCallbackReceiver). `name` marks the root and the secret. Read the fields inside tests and
 * hooks: they exist once `beforeAll` ran.
 */
export function useRunnerProcess(
  name: string,
  options: { callbacks?: { failFirst?: number } } = {},
): RunnerFixture {
  const secret = `${name}-secret-0123456789abcdef`
  let root: string | undefined
  let runner: RunnerProcess | undefined
  let receiver: CallbackReceiver | undefined
  let client: HttpSandboxRunner | undefined

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), `turnline-${name}-`))
    if (options.callbacks) receiver = await startCallbackReceiver(secret, options.callbacks)
    runner = await startRunnerProcess({ root, secret, callbackUrl: receiver?.url })
    client = new HttpSandboxRunner({ url: runner.url, secret })
  })
  afterAll(async () => {
    await runner?.stop()
    await receiver?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the ${name} runner has no ${what} (yet)`)
    return value
  }
  return {
    secret,
    get root() {
      return started(root, 'root')
    },
    get runner() {
      return started(runner, 'process')
    },
    get client() {
      return started(client, 'client')
    },
    get receiver() {
      return started(receiver, 'callback receiver')
    },
  }
}

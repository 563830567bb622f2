import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { StartedEngine } from './engine-fixture.ts'
import { startEngine } from './engine-harness.ts'
import type { RunnerProcess } from './runner-process.ts'
import { attachRunner } from './sandbox-engine.ts'

export interface EngineWithRunner {
  engine: StartedEngine
  /** The reference runner, a real process, as the engine's sandbox. */
  runner: RunnerProcess
  /** The runner's root folder: every session's workspace is below it. */
  root: string
  /** The HTTP app on the engine's service, without keys. */
  app: ReturnType<typeof createApp>
}

/**
 * The real engine with the reference runner attached, for the tests of one file: started before
 * them, stopped (and the runner's root removed) after them. `name` marks the temporary root and
 * the runner's secret (`inherit`: see startRunnerProcess). Read the fields inside tests and hooks: they exist once `beforeAll` ran.
 */
export function useEngineWithRunner(
  name: string,
  options: { inherit?: { fd: number; at: number } } = {},
): EngineWithRunner {
  let engine: EngineWithRunner['engine'] | undefined
  let runner: RunnerProcess | undefined
  let root: string | undefined
  let app: EngineWithRunner['app'] | undefined

  beforeAll(async () => {
    engine = await startEngine()
    root = await mkdtemp(join(tmpdir(), `turnline-${name}-`))
    runner = await attachRunner(engine, {
      root,
      secret: `runner-secret-${name}-0001`,
      ...(options.inherit ? { inherit: options.inherit } : {}),
    })
    app = createApp({ api: engine.service, auth: { keys: [] }, log: () => {} })
  })
  afterAll(async () => {
    await runner?.stop()
    await engine?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`the ${name} engine is not started yet (beforeAll)`)
    return value
  }
  return {
    get engine() {
      return started(engine)
    },
    get runner() {
      return started(runner)
    },
    get root() {
      return started(root)
    },
    get app() {
      return started(app)
    },
  }
}

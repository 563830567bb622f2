import { afterAll, beforeAll, beforeEach } from 'vitest'
import { startEngine } from './engine-harness.ts'

export type StartedEngine = Awaited<ReturnType<typeof startEngine>>

/**
 * The real engine (`startEngine`, with its options) for the tests of one file: started before
 * them and closed after them; before each test the mock model forgets its script and the
 * requests it saw, and the tool receiver the calls it got. Read `engine` inside tests and hooks
 * (it exists once `beforeAll` ran); hooks the file adds run after these, its `afterAll` before
 * the engine is closed.
 */
export function useEngine(options?: Parameters<typeof startEngine>[0]): {
  readonly engine: StartedEngine
} {
  let engine: StartedEngine | undefined
  beforeAll(async () => {
    engine = await startEngine(options)
  })
  afterAll(async () => {
    await engine?.close()
  })
  beforeEach(() => {
    if (!engine) return
    engine.mock.reset()
    engine.receiver.calls.length = 0
  })
  return {
    get engine() {
      if (!engine) throw new Error('the engine is not started yet (beforeAll)')
      return engine
    },
  }
}

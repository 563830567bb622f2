import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { startEngine } from './engine-harness.ts'
import { type RunnerProcess, startRunnerProcess } from './runner-process.ts'

/** Starts the reference runner as a real process and gives the engine its sandbox. */
export async function attachRunner(
  engine: Awaited<ReturnType<typeof startEngine>>,
  options: {
    root: string
    secret: string
    callbackUrl?: string
    inherit?: { fd: number; at: number }
  },
): Promise<RunnerProcess> {
  const runner = await startRunnerProcess(options)
  engine.deps.sandbox = {
    runner: new HttpSandboxRunner({ url: runner.url, secret: options.secret }),
  }
  return runner
}

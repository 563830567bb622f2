import { type RunnerProcess, spawnRunnerProcess } from '../../adapters/runner/runner-process.ts'
import { runnerEnvAhead } from '../runner-process-env.ts'
import { keepArrayResultsPacked } from './packed-array-results.ts'
import { limitRegExpBacktracking } from './regexp-backtracking.ts'

/**
 * Node entry (`npm start`, built: `node dist/node/server.mjs`): the embedded defaults (sessions
 * in the filesystem store, the reference runner as a child process calling back this server),
 * served at HOST:PORT with a graceful shutdown on SIGINT/SIGTERM (node-main.ts). A runner that
 * keeps dying is restarted; one that cannot be kept running stops the server (exit 1), so that
 * whatever supervises it starts a whole new one.
 *
 * The runner is a second Node process that loads its own code and probes its sandbox before the
 * server may listen, the longest part of a start. Its process is spawned first, from the
 * variables as they are (`runnerEnvAhead`: nothing else of this module's code is loaded yet),
 * and waits unconfigured, running nothing, until it is handed its settings; then the request
 * createDeps will make is worked out from the environment (`earlyEmbeddedRunnerRequest`), the
 * process gets its settings when the request asks for its environment (otherwise it is abandoned
 * and another spawned), and the server's code loads meanwhile (node-main.ts, imported after).
 * The deps then take it over when they ask for the same runner; every startup check — the whole
 * configuration, the deployment guard, a refused sandbox — still comes before the server listens.
 */
limitRegExpBacktracking()
keepArrayResultsPacked()
const ahead = spawnAhead()
const [{ earlyEmbeddedRunnerRequest }, { embeddedRunner }] = await Promise.all([
  import('../embedded-runner-request.ts'),
  import('./embedded-runner.ts'),
])
const runner = embeddedRunner({
  callbacks: true,
  report: (line) => console.error(`turnline: WARNING: ${line}`),
  onRunnerGivenUp: () => {
    console.error('turnline: stopping: the server has no sandbox runner')
    void runner.close().finally(() => process.exit(1))
  },
})
const request = earlyEmbeddedRunnerRequest(process.env, { fsStoreByDefault: true })
if (request !== undefined) await runner.startEarly(request, ahead)
else ahead?.abandon()
const { serveNodeEntry } = await import('./node-main.ts')
await serveNodeEntry(runner)

/** The runner's process, unconfigured; none with a runner URL, or when it cannot be spawned. */
function spawnAhead(): RunnerProcess | undefined {
  const env = runnerEnvAhead(process.env)
  if (env === undefined) return undefined
  try {
    return spawnRunnerProcess(env)
  } catch {
    // The start proper spawns it again, and says what is wrong.
    return undefined
  }
}

import { earlyEmbeddedRunnerRequest } from '../embedded-runner-request.ts'
import { embeddedRunner } from './embedded-runner.ts'
import { limitRegExpBacktracking } from './regexp-backtracking.ts'

/**
 * Node entry (`npm start`, built: `node dist/node/server.mjs`): the embedded defaults (sessions
 * in the filesystem store, the reference runner as a child process calling back this server),
 * served at HOST:PORT with a graceful shutdown on SIGINT/SIGTERM (node-main.ts). A runner that
 * keeps dying is restarted; one that cannot be kept running stops the server (exit 1), so that
 * whatever supervises it starts a whole new one.
 *
 * The runner is a second Node process that loads its own code and probes its sandbox before the
 * server may listen; it is started first, from what the environment asks for
 * (`earlyEmbeddedRunnerRequest`), and the server's code loads meanwhile (node-main.ts, imported
 * after). The deps then take it over when they ask for the same runner; every startup check —
 * the whole configuration, the deployment guard, a refused sandbox — still comes before the
 * server listens.
 */
limitRegExpBacktracking()
const runner = embeddedRunner({
  callbacks: true,
  report: (line) => console.error(`turnline: WARNING: ${line}`),
  onRunnerGivenUp: () => {
    console.error('turnline: stopping: the server has no sandbox runner')
    void runner.close().finally(() => process.exit(1))
  },
})
const request = earlyEmbeddedRunnerRequest(process.env, { fsStoreByDefault: true })
if (request !== undefined) await runner.startEarly(request)
const { serveNodeEntry } = await import('./node-main.ts')
await serveNodeEntry(runner)

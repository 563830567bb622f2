import { preloadEncodings } from '../../src/core/session-service.ts'
import { startCallbackLoop } from './callback-loop.ts'
import { onStartupError, startEntryApp } from './entry-app.ts'
import { nodeEmbedded } from './node-embedded.ts'
import { serveOnNode } from './node-server.ts'
import { limitRegExpBacktracking } from './regexp-backtracking.ts'

/**
 * Node entry (`npm start`, built: `node dist/node/server.mjs`): the embedded defaults (sessions
 * in the filesystem store, the reference runner as a child process calling back this server),
 * served at HOST:PORT with a graceful shutdown on SIGINT/SIGTERM. A runner that keeps dying is
 * restarted; one that cannot be kept running stops the server (exit 1), so that whatever
 * supervises it starts a whole new one.
 */
limitRegExpBacktracking()
// The tokenizer's o200k table (the encoding of current models) loads on this thread while the
// embedded runner starts in its own process (startEntryApp waits for it); preload() below then
// finds it loaded, or loads the default model's encoding when that is another.
const encodings = preloadEncodings().catch(() => undefined)
const embedded = nodeEmbedded({
  callbacks: true,
  report: (line) => console.error(`turnline: WARNING: ${line}`),
  onRunnerGivenUp: () => {
    console.error('turnline: stopping: the server has no sandbox runner')
    void embedded.close().finally(() => process.exit(1))
  },
})
const entry = await startEntryApp(process.env, embedded.options, {
  log: (line) => console.log(line),
  startLineAtListen: true,
  background: true,
  sockets: true,
}).catch(onStartupError((code) => process.exit(code)))
// Before listening: loaded on first use, the tokenizer would hold every request for ≈ 0.2–0.5 s.
await encodings
await entry.api.preload()
const callbacks = startCallbackLoop(entry.deps)
serveOnNode(entry, async () => {
  entry.worker?.stop()
  callbacks?.stop()
  await Promise.all([embedded.close(), entry.deps.flushTelemetry?.()])
})
// Background turns recorded before this process started (or by an instance that died) first.
entry.worker?.start()

import { onStartupError, startEntryApp } from './entry-app.ts'
import { nodeEmbedded } from './node-embedded.ts'
import { serveOnNode } from './node-server.ts'

/**
 * Node entry (`npm start`, built: `node dist/node/server.mjs`): the embedded defaults (sessions
 * in the filesystem store, the reference runner in this process calling back this server),
 * served at HOST:PORT with a graceful shutdown on SIGINT/SIGTERM.
 */
const embedded = nodeEmbedded({ callbacks: true })
const entry = await startEntryApp(process.env, embedded.options, {
  log: (line) => console.log(line),
  startLineAtListen: true,
}).catch(onStartupError((code) => process.exit(code)))
serveOnNode(entry, () => embedded.close())

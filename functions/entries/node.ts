import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { SessionService } from '../../src/core/session-service.ts'
import { createApp } from '../app.ts'
import { createDeps } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import { nodeEmbedded } from './node-embedded.ts'
import { logStart } from './start-log.ts'

/** Node entry (`npm start`): embedded fs store by default, graceful shutdown on SIGINT/SIGTERM. */
const SHUTDOWN_GRACE_MS = 5000

// The embedded defaults: fs store, the reference runner in this process calling back this server.
const embedded = nodeEmbedded({ callbacks: true })
const deps = await createDeps(process.env, embedded.options).catch((error: unknown) => {
  if (!(error instanceof ConfigError)) throw error
  console.error(`turnline: ${error.message}`)
  process.exit(1)
})
for (const notice of deps.notices) console.log(`turnline: ${notice}`)
for (const warning of deps.warnings) {
  const rule = `turnline: ${'!'.repeat(72)}`
  console.error(`${rule}\nturnline: WARNING: ${warning}\n${rule}`)
}
const app = createApp({ api: new SessionService(deps.service), auth: deps.auth, ...deps.http })

const { host, port } = deps.server
const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
  const shown = info.family === 'IPv6' ? `[${info.address}]` : info.address
  console.log(`turnline: listening on http://${shown}:${info.port} (docs: /docs)`)
  logStart(deps, `http://${shown}:${info.port}`)
})
server.on('error', (error: NodeJS.ErrnoException) => {
  const why = error.code === 'EADDRINUSE' ? `port ${port} is in use (set PORT)` : error.message
  console.error(`turnline: cannot listen on ${host}:${port}: ${why}`)
  process.exit(1)
})

let stopping = false
function shutdown(signal: string): void {
  if (stopping) return
  stopping = true
  console.log(`turnline: ${signal}, closing (open streams get ${SHUTDOWN_GRACE_MS} ms)`)
  void embedded.close()
  server.close(() => process.exit(0))
  if ('closeIdleConnections' in server) server.closeIdleConnections()
  setTimeout(() => {
    if ('closeAllConnections' in server) server.closeAllConnections()
    process.exit(0)
  }, SHUTDOWN_GRACE_MS).unref()
}
process.on('SIGINT', () => shutdown('SIGINT'))
process.on('SIGTERM', () => shutdown('SIGTERM'))

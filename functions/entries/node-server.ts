import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { DEFAULT_BODY_LIMITS } from '../http/read-body.ts'
import type { EntryApp } from './entry-app.ts'
import { serveSocketsOnNode } from './node-sockets.ts'
import { logStart } from './start-log.ts'

/** How long open streams (SSE turns, followed feeds) get after SIGINT/SIGTERM. */
const SHUTDOWN_GRACE_MS = 5000

/**
 * Serves the app over HTTP on Node at the configured HOST and PORT: prints where it listens
 * (and the start line with that URL), exits 1 when it cannot listen, and on SIGINT/SIGTERM
 * closes the listener, runs `onShutdown` (the embedded runner) and gives open streams
 * SHUTDOWN_GRACE_MS before it exits.
 */
export function serveOnNode(entry: EntryApp, onShutdown: () => Promise<void>): void {
  const { host, port } = entry.deps.server
  const server = serve({ fetch: entry.app.fetch, hostname: host, port }, (info: AddressInfo) => {
    const shown = info.family === 'IPv6' ? `[${info.address}]` : info.address
    console.log(`turnline: listening on http://${shown}:${info.port} (docs: /docs)`)
    logStart(entry.deps, `http://${shown}:${info.port}`)
  })
  if (entry.sockets) {
    const maxBytes = entry.deps.http.limits?.maxBytes ?? DEFAULT_BODY_LIMITS.maxBytes
    serveSocketsOnNode(server as Server, entry.app.fetch, entry.sockets, maxBytes)
  }
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
    // Exit once the listener is closed and the runner has ended its commands (or at the grace).
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    void Promise.allSettled([closed, onShutdown()]).then(() => process.exit(0))
    if ('closeIdleConnections' in server) server.closeIdleConnections()
    setTimeout(() => {
      if ('closeAllConnections' in server) server.closeAllConnections()
      process.exit(0)
    }, SHUTDOWN_GRACE_MS).unref()
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))
}

import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { Hono } from 'hono'

export interface RunningServer {
  url: string
  close(): Promise<void>
}

/** Serves a Hono app over real HTTP on 127.0.0.1 with an ephemeral port. */
export async function serveApp(
  app: Hono<never> | { fetch: Hono['fetch'] },
): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve(
      { fetch: app.fetch, hostname: '127.0.0.1', port: 0 },
      (info: AddressInfo) => {
        resolve({
          url: `http://127.0.0.1:${info.port}`,
          close: () =>
            new Promise<void>((done) => {
              if ('closeAllConnections' in server) server.closeAllConnections()
              server.close(() => done())
            }),
        })
      },
    )
  })
}

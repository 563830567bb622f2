import { isLoopbackHost } from '../env-config.ts'
import { isSingleTenant } from '../http/auth.ts'
import { denoSocketAcceptor } from './deno-sockets.ts'
import type { EntryApp, FetchHandler } from './entry-app.ts'
import { withSocketUpgrades } from './standard-sockets.ts'

/** What `deno serve` hands to `onListen`. */
export type ListenAddr = { transport: string; hostname?: string; port?: number; path?: string }

/** The default export of a `deno serve` module. */
export interface DenoServeModule {
  fetch: FetchHandler
  onListen(addr: ListenAddr): void
}

/**
 * The app as a `deno serve` module. `deno serve` takes the address from its own flags (PORT
 * and HOST do not apply), so the loopback rule is checked once it listens: without
 * TURNLINE_API_KEYS (single-tenant, unauthenticated) any address but loopback stops the server.
 * WebSocket upgrades the app accepts are carried out with `Deno.upgradeWebSocket`.
 */
export function denoServeModule(entry: EntryApp, exit: (code: number) => never): DenoServeModule {
  const singleTenant = isSingleTenant(entry.deps.auth)
  return {
    fetch: entry.sockets
      ? withSocketUpgrades(entry.fetch, entry.sockets, denoSocketAcceptor)
      : entry.fetch,
    onListen(addr) {
      const host = addr.hostname ?? ''
      if (addr.transport === 'tcp' && singleTenant && !isLoopbackHost(host)) {
        console.error(
          `turnline: refusing to serve on ${host}: without TURNLINE_API_KEYS the server is ` +
            'single-tenant and unauthenticated; pass --host 127.0.0.1 or set TURNLINE_API_KEYS',
        )
        exit(1)
      }
      const where = addr.transport === 'tcp' ? `http://${host}:${addr.port}` : String(addr.path)
      console.error(`turnline: listening on ${where}`)
    },
  }
}

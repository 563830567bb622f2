import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { createDeps } from '../deps.ts'
import { ConfigError, isLoopbackHost } from '../env-config.ts'
import { isSingleTenant } from '../http/auth.ts'
import { serveApp } from './serve-app.ts'

/** The part of the Deno namespace this entry uses (tsc here has no Deno types). */
declare const Deno: {
  env: { toObject(): Record<string, string> }
  exit(code: number): never
}
type ListenAddr = { transport: string; hostname?: string; port?: number; path?: string }

/**
 * Deno entry: `deno serve --host 127.0.0.1 --allow-net --allow-env --allow-read --allow-write
 * functions/entries/deno.ts`. Packages resolve from node_modules (deno.json). Sessions default to the
 * embedded filesystem store under TURNLINE_DATA_DIR, as on Node; Deno Deploy has no writable
 * disk, so set S3_BUCKET there. A configuration error stops the server at startup. `deno serve`
 * takes the address from its own flags, so PORT and HOST are not used; without
 * TURNLINE_API_KEYS (single-tenant, unauthenticated) it refuses any address but loopback.
 */
const deps = await createDeps(Deno.env.toObject(), {
  defaultStore: (root) => new FsObjectStore({ root }),
}).catch((error: unknown) => {
  if (!(error instanceof ConfigError)) throw error
  console.error(`turnline: ${error.message}`)
  return Deno.exit(1)
})
const singleTenant = isSingleTenant(deps.auth)

export default {
  fetch: serveApp(deps),
  onListen(addr: ListenAddr): void {
    const host = addr.hostname ?? ''
    if (addr.transport === 'tcp' && singleTenant && !isLoopbackHost(host)) {
      console.error(
        `turnline: refusing to serve on ${host}: without TURNLINE_API_KEYS the server is ` +
          'single-tenant and unauthenticated; pass --host 127.0.0.1 or set TURNLINE_API_KEYS',
      )
      Deno.exit(1)
    }
    const where = addr.transport === 'tcp' ? `http://${host}:${addr.port}` : String(addr.path)
    console.error(`turnline: listening on ${where}`)
  },
}

import { AsyncLocalStorage } from 'node:async_hooks'
import { checkedFetch } from '../../adapters/egress/checked-fetch.ts'
import { denoEgressPolicy } from '../../adapters/egress/deno-egress-host.ts'
import { useRankTables } from '../../src/core/session-service.ts'
import { denoPeer } from '../http/client-address.ts'
import { startCallbackLoop } from './callback-loop.ts'
import { type DenoPermissionQuery, missingDenoPermissions } from './deno-permissions.ts'
import { denoServeModule } from './deno-server.ts'
import { onStartupError, startEntryApp } from './entry-app.ts'
import { rankTableFiles } from './rank-table-files.ts'
import { referenceScriptOption } from './reference-script-file.ts'
import { warmedFsStore } from './warmed-fs-store.ts'

/** The part of the Deno namespace this entry uses (tsc here has no Deno types). */
declare const Deno: {
  env: { toObject(): Record<string, string> }
  exit(code: number): never
  permissions: { querySync: DenoPermissionQuery }
}

/**
 * Deno entry: `deno serve --host 127.0.0.1 --allow-net --allow-env --allow-read --allow-write
 * --allow-sys=networkInterfaces functions/entries/deno.ts` (the last for the address checks of
 * callbacks and tenants' calls with keys: deno-permissions.ts). Packages resolve from node_modules (deno.json). Sessions default to the
 * embedded filesystem store under TURNLINE_DATA_DIR, as on Node; Deno Deploy has no writable
 * disk, so set S3_BUCKET there. A configuration error stops the server at startup; so does
 * the lack of TURNLINE_API_KEYS (or the key registry) unless TURNLINE_SINGLE_TENANT is set, and
 * then an address other than loopback (`deno serve` takes the address from its own flags, so
 * PORT and HOST are not used). `deno serve` lives on between requests as Node does, so it runs the
 * same background worker (background turns, webhook 202s, loop runs and schedules) and the same
 * callback delivery loop.
 */
const exit = (code: number): never => Deno.exit(code)
useRankTables(rankTableFiles)
const entry = await startEntryApp(
  Deno.env.toObject(),
  // Deno Deploy serves a public address: without keys the entry refuses to start unless
  // TURNLINE_SINGLE_TENANT is set (and then only on loopback, checked at listen).
  {
    defaultStore: warmedFsStore,
    reachableFromAnywhere: true,
    peerAddress: denoPeer,
    // Callbacks in multi-tenant mode and hosts only `*` allows: every address resolved and
    // checked when the call connects, and the connection made to the checked address (undici
    // over Deno's node:net and node:tls, which keep the name for SNI and the certificate).
    checkedFetch: (rules) => checkedFetch(denoEgressPolicy(rules)),
    contextStorage: () => new AsyncLocalStorage(),
    // The API reference renderer from node_modules (read with --allow-read), as on Node: /docs
    // renders offline. Without a copy there, the page loads it from the pinned CDN.
    ...referenceScriptOption(),
  },
  { log: (line) => console.error(line), background: true, sockets: true },
  (deps) => missingDenoPermissions(deps, (descriptor) => Deno.permissions.querySync(descriptor)),
).catch(onStartupError(exit))

// Work and notices recorded before this process started (or by one that died) are swept first.
startCallbackLoop(entry.deps)
entry.worker?.start()

export default denoServeModule(entry, exit)

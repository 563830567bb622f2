import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import type { Deps } from '../deps.ts'
import { isSingleTenant } from '../http/auth.ts'

/** The part of Deno's permission API this check uses (tsc here has no Deno types). */
export type DenoPermissionQuery = (
  descriptor:
    | { name: 'net'; host: string }
    | { name: 'read' | 'write'; path: string }
    | { name: 'sys'; kind: 'networkInterfaces' },
) => { state: 'granted' | 'prompt' | 'denied' }

/**
 * What the deployment as configured needs from Deno's flags and is not granted, one line each,
 * naming the flag: `--allow-read` and `--allow-write` for the filesystem store's folder, and
 * `--allow-net` for each host the server calls as configured (the model endpoint, the sandbox
 * runner), and `--allow-sys=networkInterfaces` where calls are checked against the egress rules
 * (multi-tenant callbacks, or `*` in TURNLINE_TOOL_ALLOWED_HOSTS: the check refuses this host's
 * own addresses, read from its interfaces). `deno serve` gives no prompt, so a permission not granted is refused at the first
 * call; the Deno entry checks here and stops before it serves. The store's and the
 * coordinator's hosts are checked by the calls every start makes (startup-probe.ts), whose
 * refusal names the host and the flag as well. `--allow-env` is the first thing the entry needs
 * (`Deno.env`), and Deno itself names it when it is missing.
 */
export function missingDenoPermissions(deps: Deps, query: DenoPermissionQuery): string[] {
  const missing: string[] = []
  const need = (granted: boolean, flag: string, why: string) => {
    if (!granted) missing.push(`Deno permission not granted: ${flag} (${why})`)
  }
  const store = deps.service.sessions.objects
  if (store instanceof FsObjectStore) {
    const path = store.root
    const where = `the filesystem store keeps sessions in ${path} (TURNLINE_DATA_DIR)`
    need(query({ name: 'read', path }).state === 'granted', `--allow-read=${path}`, where)
    need(query({ name: 'write', path }).state === 'granted', `--allow-write=${path}`, where)
  }
  const hosts = [
    [
      'the model endpoint (OPENAI_BASE_URL)',
      deps.model.provider === 'openai' ? deps.model.baseURL : undefined,
    ],
    ['the sandbox runner (TURNLINE_RUNNER_URL)', deps.config.TURNLINE_RUNNER_URL],
  ] as const
  for (const [what, url] of hosts) {
    if (url === undefined) continue
    const { hostname, port, protocol } = new URL(url)
    const host = `${hostname}:${port || (protocol === 'https:' ? '443' : '80')}`
    need(query({ name: 'net', host }).state === 'granted', `--allow-net=${host}`, what)
  }
  if (!isSingleTenant(deps.auth) || deps.config.TURNLINE_TOOL_ALLOWED_HOSTS?.includes('*')) {
    need(
      query({ name: 'sys', kind: 'networkInterfaces' }).state === 'granted',
      '--allow-sys=networkInterfaces',
      "callbacks and tenants' calls are checked against the egress rules, which refuse this " +
        "host's own addresses (TURNLINE_API_KEYS, or * in TURNLINE_TOOL_ALLOWED_HOSTS)",
    )
  }
  return missing
}
